//! Work-group and sub-group collectives (`work_group_reduce_add`,
//! `sub_group_scan_exclusive_min`, `work_group_broadcast`,
//! `work_group_all`, ...; SPIR-V `OpGroup*`).
//!
//! Every work-item of the group (sub-group) deposits its value in the
//! exchange of its `k`-th collective of that scope, waits at a barrier of
//! that scope at the collective's line, then computes its own result from
//! all the values: a reduction, its inclusive or exclusive scan, a
//! broadcast, `all` or `any`. The exchange and the combination are the
//! runtime's ([`clsync::collective`], which Rust kernels' collectives use
//! too); this module maps SPIR-V's operations onto them. The barrier is the
//! runtime's, so a collective that not every work-item reaches is a
//! divergence report, never a hang. Its flags are `CLK_LOCAL_MEM_FENCE`,
//! as the runtime takes no barrier without flags: free here (a group's
//! work-items run on one thread), but the checker then takes the
//! collective to order local memory as a barrier would, and a local-memory
//! race across a collective goes unreported.

use clsync::collective::Combine;

use super::ctx::ItemCtx;
use super::helpers;

/// A launch's open exchanges.
pub type Exchanges = clsync::collective::Exchanges;

/// One work-item's count of collectives, per scope.
#[derive(Default, Debug)]
pub struct ItemCollectives {
    group: u64,
    sub_group: u64,
}

/// The operation, as the translator encodes it.
pub mod op {
    /// `OpGroupIAdd`, `OpGroupFAdd`.
    pub const ADD: u32 = 0;
    /// `OpGroupSMin`, `OpGroupUMin`, `OpGroupFMin`.
    pub const MIN: u32 = 1;
    /// `OpGroupSMax`, `OpGroupUMax`, `OpGroupFMax`.
    pub const MAX: u32 = 2;
    /// `OpGroupAll`.
    pub const ALL: u32 = 3;
    /// `OpGroupAny`.
    pub const ANY: u32 = 4;
    /// `OpGroupBroadcast`: the value of the lane `arg` names.
    pub const BROADCAST: u32 = 5;
    /// The bits of the lanes whose value is nonzero (`sub_group_ballot`).
    pub const BALLOT: u32 = 6;
    /// Bitwise and (`sub_group_reduce_and`, cl_khr_subgroup_non_uniform_arithmetic).
    pub const AND: u32 = 7;
    /// Bitwise or.
    pub const OR: u32 = 8;
    /// Bitwise exclusive or.
    pub const XOR: u32 = 9;
    /// Multiplication.
    pub const MUL: u32 = 10;
    /// The value of the lowest active lane (`sub_group_broadcast_first`,
    /// and `sub_group_elect` on the lanes' ids).
    pub const FIRST: u32 = 11;
    /// Whether every active lane's value is the same
    /// (`sub_group_non_uniform_all_equal`).
    pub const ALL_EQUAL: u32 = 12;
}

/// The value type, as the translator encodes it.
pub mod ty {
    /// A signed integer of `bits`.
    pub const SIGNED: u32 = 0;
    /// An unsigned integer.
    pub const UNSIGNED: u32 = 1;
    /// A float (32 or 64 bits).
    pub const FLOAT: u32 = 2;
}

fn combine(op: u32, kind: u32, bits: u32, a: u64, b: u64) -> u64 {
    let mask = super::bits::mask(bits);
    let sx = |v: u64| super::bits::signed(v, bits);
    let f = |v: u64| super::bits::float(v, bits);
    let unf = |v: f64| super::bits::float_bits(v, bits);
    match (op, kind) {
        (op::ADD, ty::FLOAT) => unf(f(a) + f(b)),
        (op::ADD, _) => a.wrapping_add(b) & mask,
        (op::MIN, ty::FLOAT) => unf(f(a).min(f(b))),
        (op::MAX, ty::FLOAT) => unf(f(a).max(f(b))),
        (op::MIN, ty::SIGNED) => (sx(a).min(sx(b)) as u64) & mask,
        (op::MAX, ty::SIGNED) => (sx(a).max(sx(b)) as u64) & mask,
        (op::MIN, _) => a.min(b),
        (op::MAX, _) => a.max(b),
        (op::MUL, ty::FLOAT) => unf(f(a) * f(b)),
        (op::MUL, _) => a.wrapping_mul(b) & mask,
        (op::AND, _) => a & b,
        (op::OR, _) => a | b,
        (op::XOR, _) => a ^ b,
        (op::ALL, _) => u64::from(a != 0 && b != 0),
        (op::ANY, _) => u64::from(a != 0 || b != 0),
        _ => a,
    }
}

/// The identity of `op` (an exclusive scan's first result).
fn identity(op: u32, kind: u32, bits: u32) -> u64 {
    let mask = super::bits::mask(bits);
    let f = |v: f64| super::bits::float_bits(v, bits);
    match (op, kind) {
        (op::ADD, ty::FLOAT) => f(0.0),
        (op::MIN, ty::FLOAT) => f(f64::INFINITY),
        (op::MAX, ty::FLOAT) => f(f64::NEG_INFINITY),
        (op::MIN, ty::SIGNED) => mask >> 1,
        (op::MAX, ty::SIGNED) => (mask >> 1) + 1,
        (op::MIN, _) => mask,
        (op::MUL, ty::FLOAT) => f(1.0),
        (op::MUL, _) => 1,
        (op::AND, _) => mask,
        (op::ALL, _) => 1,
        _ => 0,
    }
}

/// A collective: `scope` 2 (work-group) or 3 (sub-group); `group_op` 0
/// reduce, 1 inclusive scan, 2 exclusive scan; `kind_bits` the type (bits
/// 0-7) and width (8 and up); `arg` a broadcast's lane. Returns the
/// work-item's result.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn clsync_collective(
    ctx: *mut ItemCtx,
    scope: u32,
    op: u32,
    group_op: u32,
    kind_bits: u32,
    value: u64,
    arg: u64,
    site: u32,
) -> u64 {
    // SAFETY: our contract.
    let c = unsafe { &mut *ctx };
    // SAFETY: the host side lives for the work-item's run (`exec::run`).
    let host = unsafe { &*c.host };
    let wi = host.runner.item();
    let sub = scope == 3;
    let group = [wi.get_group_id(0), wi.get_group_id(1), wi.get_group_id(2)];
    let (lane, lanes, which) = if sub {
        (
            wi.get_sub_group_local_id() as usize,
            wi.get_sub_group_size() as usize,
            wi.get_sub_group_id(),
        )
    } else {
        (
            wi.get_local_linear_id(),
            wi.get_local_size(0) * wi.get_local_size(1) * wi.get_local_size(2),
            u32::MAX,
        )
    };
    let k = if sub {
        &mut c.collectives.sub_group
    } else {
        &mut c.collectives.group
    };
    let key = (group, which, *k);
    *k += 1;
    host.exchanges.deposit(key, lanes, lane, value);
    // The barrier of the collective's scope (local memory, see the module
    // docs): every lane has deposited its value after it.
    // SAFETY: `c` is this call's context (our contract).
    unsafe { helpers::clsync_barrier(&mut *c, scope, scope, 0x100, site) };
    if c.status != 0 {
        return 0;
    }
    let (kind, bits) = (kind_bits & 0xff, kind_bits >> 8);
    host.exchanges
        .result(
            key,
            lanes,
            lane,
            how(op, group_op, arg),
            identity(op, kind, bits),
            |a, b| combine(op, kind, bits, a, b),
        )
        .unwrap_or(0)
}

/// Which values a lane's result combines, from the translator's codes.
fn how(op: u32, group_op: u32, arg: u64) -> Combine {
    match (op, group_op) {
        (op::BROADCAST, _) => Combine::Broadcast(arg as usize),
        (op::BALLOT, _) => Combine::Ballot,
        (op::FIRST, _) => Combine::First,
        (op::ALL_EQUAL, _) => Combine::AllEqual,
        (_, 1) => Combine::InclusiveScan,
        (_, 2) => Combine::ExclusiveScan,
        (_, 3) => Combine::Clustered(arg as usize),
        _ => Combine::Reduce,
    }
}

/// A non-uniform sub-group operation (SPIR-V's `OpGroupNonUniform*`:
/// `sub_group_elect`, `sub_group_ballot`, `sub_group_non_uniform_*`,
/// shuffles, clustered reductions), over the work-items of the sub-group
/// that reach it together, its active set, and no others
/// ([`clsync::sync::BarrierKind::SubGroupActive`]): the arguments as
/// [`clsync_collective`]'s, and `id` the operation's result id, which
/// tells two operations at one line apart. Returns the work-item's result.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn clsync_sub_group_active(
    ctx: *mut ItemCtx,
    op: u32,
    group_op: u32,
    kind_bits: u32,
    value: u64,
    arg: u64,
    site: u32,
    id: u64,
) -> u64 {
    // SAFETY: our contract.
    let c = unsafe { &mut *ctx };
    // SAFETY: the host side lives for the work-item's run (`exec::run`).
    let host = unsafe { &*c.host };
    let wi = host.runner.item();
    let group = [wi.get_group_id(0), wi.get_group_id(1), wi.get_group_id(2)];
    let lane = wi.get_sub_group_local_id() as usize;
    let key = (group, wi.get_sub_group_id(), id);
    let ticket = host.exchanges.deposit_active(key, lane, value);
    // SAFETY: `c` is this call's context (our contract).
    unsafe { helpers::clsync_sub_group_wait(&mut *c, site, id) };
    if c.status != 0 {
        return 0;
    }
    let (kind, bits) = (kind_bits & 0xff, kind_bits >> 8);
    host.exchanges
        .result_active(
            ticket,
            lane,
            how(op, group_op, arg),
            identity(op, kind, bits),
            |a, b| combine(op, kind, bits, a, b),
        )
        .unwrap_or(0)
}
