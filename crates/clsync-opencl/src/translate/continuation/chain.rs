//! Chained intervals: a function of one state `k` (`GroupEntry::by_state`,
//! unchecked) whose group all reached barrier `k` again runs the next
//! interval itself, from its loop's head, instead of returning to the
//! runtime for the barrier and being called again. A barrier inside a loop
//! (`for (...) { barrier(...); acc = acc * 3 + 1; }`) is then one call per
//! group for up to [`MAX_CHAINED`] intervals: the runtime's per-interval
//! work (the test of every place, the barrier's checks, the call and the
//! function's prologue) was a fifth of such a group's time at local size 64.
//!
//! What the runtime's barrier does in an unchecked work-item loop, the code
//! does here or leaves to it:
//!
//! - **Matching**: the loop or-s each batch's place xor `k` into one
//!   register; zero at the loop's end means every work-item waits at
//!   barrier `k`. Any other place returns, and the runtime compares the
//!   places as before (a divergence is its report). An agreed interval
//!   (`agreed`), whose group stops at one place, compares the last
//!   work-item's place with `k` once instead.
//! - **Flags**: the barrier's flags and scope are constants of the code,
//!   valid (`validate::barrier`, as the runtime checks them) or the
//!   barrier is not chained.
//! - **Fences**: the group runs on this thread, so a barrier at work-group
//!   scope orders its memory by program order (`fence_kind` is a compiler
//!   fence or none): the code's loads and stores stay in order across the
//!   jump. A barrier whose fence is a hardware one (device scope on global
//!   memory) is not chained.
//! - **Cancellation**: the runtime's cancellation gate is read at each
//!   chained barrier; while it is raised (a cancelled launch, the
//!   watchdog's probation) the function returns and the runtime's barrier
//!   polls.
//! - **Progress**: the intervals chained are counted in the context
//!   ([`ItemCtx::chained`](crate::exec::ctx::ItemCtx::chained)); the runtime
//!   adds them to the group's progress (`Group::passed_barriers`) after the
//!   call. At most [`MAX_CHAINED`] are chained per call, so the watchdog
//!   sees the group move.

use clsync_spirv::Function;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::BarrierSpec;
use crate::exec::ctx::CTX_CHAINED;
use crate::exec::helpers::{fence_flags, scope};
use crate::translate::function::{mem, Fx};

/// Intervals one call chains at most.
pub const MAX_CHAINED: i64 = 256;

/// Whether barrier `spec` can be passed by compiled code alone (see the
/// module docs): valid flags and scope, and no hardware fence.
pub(crate) fn chainable(spec: &BarrierSpec) -> bool {
    use clsync::sync::{fence_kind, validate, FenceKind, MemOrder};
    let scope = scope(spec.mem_scope);
    match validate::barrier("work_group_barrier", fence_flags(spec.semantics), scope) {
        Ok(flags) => fence_kind(flags, MemOrder::AcqRel, scope) != FenceKind::Hardware,
        Err(_) => false,
    }
}

/// Whether the interval that starts after barrier `k` of kernel body `f`
/// can end at barrier `k` again: a path from right after it back to it
/// that meets no other barrier (a barrier in a loop whose body has no
/// other). Barriers count from 1 in the translation's order (blocks in
/// reverse postorder, instructions in order), as `BarrierSpec`s do.
pub(crate) fn returns_to_itself(f: &Function, k: u32) -> bool {
    // Barrier `k` is index `k - 1` among the interval's ways out.
    k > 0 && super::agreed::Interval::of(f, k).is_some_and(|i| i.exits.contains(&(k as usize - 1)))
}

impl Fx<'_, '_> {
    /// The state of an unchecked build of one state that resumes after a
    /// barrier: the builds that may chain (and narrow, `narrow`).
    pub(super) fn resumed_state(&self) -> Option<u32> {
        let c = self.cont.as_ref()?;
        match c.plan.only_state {
            Some(k) if k > 0 && !self.s.checked => Some(k),
            _ => None,
        }
    }

    /// In the prologue of kernel body `f`, before the first jump to the
    /// loop's head: the register that gathers the places' differences from
    /// the state, where the state's interval may end at its own barrier.
    pub(super) fn chain_start(&mut self, f: &Function) -> Option<Variable> {
        let k = self.resumed_state()?;
        if !returns_to_itself(f, k) {
            return None;
        }
        let diff = self.b.declare_var(types::I32);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.def_var(diff, zero);
        Some(diff)
    }

    /// In the loop's step, where a work-item (or batch) stopped at `r`.
    pub(super) fn chain_note(&mut self, diff: Variable, r: Value) {
        let Some(k) = self.resumed_state() else {
            return;
        };
        let off = self.b.ins().bxor_imm_s(r, k as i64);
        let d = self.b.use_var(diff);
        let d = self.b.ins().bor(d, off);
        self.b.def_var(diff, d);
    }

    /// At the loop's end, where the last work-item stopped at `r`: runs the
    /// state's interval again from the group's block (which starts the
    /// loop at the group's first work-item) where every work-item waits at
    /// its barrier and the barrier is chainable, else returns `r`.
    pub(super) fn chain_exit(&mut self, diff: Variable, r: Value) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (group, k) = (
            c.group_block.expect("a group block").0,
            self.resumed_state(),
        );
        let spec = k.and_then(|k| c.barriers.get(k as usize - 1));
        if !spec.is_some_and(chainable) {
            self.b.ins().return_(&[r]);
            return;
        }
        let all_there = match (c.agreed, k) {
            // The whole group stopped where the last work-item did
            // (`agreed`): no difference was gathered, none is read (a read
            // would carry the register through the loop).
            (true, Some(k)) => self.b.ins().icmp_imm_s(IntCC::Equal, r, k as i64),
            _ => {
                let d = self.b.use_var(diff);
                self.b.ins().icmp_imm_s(IntCC::Equal, d, 0)
            }
        };
        let raised = self.gate_raised();
        let down = self.b.ins().icmp_imm_s(IntCC::Equal, raised, 0);
        let ctx = self.ctx;
        let chained = self.b.ins().load(types::I64, mem(), ctx, CTX_CHAINED);
        let room = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThan, chained, MAX_CHAINED);
        let go = self.b.ins().band(all_there, down);
        let go = self.b.ins().band(go, room);
        let again = self.b.create_block();
        let ret = self.b.create_block();
        self.b.ins().brif(go, again, &[], ret, &[]);

        self.b.switch_to_block(again);
        // (The differences are zero here, as the next interval starts.)
        let chained = self.b.ins().iadd_imm_s(chained, 1);
        self.b.ins().store(mem(), chained, ctx, CTX_CHAINED);
        self.b.ins().jump(group, &[]);

        self.b.switch_to_block(ret);
        self.b.ins().return_(&[r]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPIR-V's scopes (Device 1, Workgroup 2, Invocation 4) and memory
    /// semantics (WorkgroupMemory 0x100, CrossWorkgroupMemory 0x200,
    /// SequentiallyConsistent 0x10).
    #[test]
    fn barriers_at_work_group_scope_chain_and_others_do_not() {
        let spec = |mem_scope, semantics| BarrierSpec {
            mem_scope,
            semantics,
            site: 0,
        };
        assert!(chainable(&spec(2, 0x110)), "local memory, work-group scope");
        assert!(
            chainable(&spec(2, 0x310)),
            "both memories, work-group scope"
        );
        assert!(!chainable(&spec(1, 0x210)), "global memory, device scope");
        assert!(!chainable(&spec(4, 0x110)), "a work-item scope is invalid");
    }

    /// Each barrier of `src`'s kernel `k`, whether its interval returns to
    /// it.
    fn returning(src: &str) -> Vec<bool> {
        let p =
            crate::Program::build(src, "k.cl", "").unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let e = m.entry_points.iter().find(|e| e.name == "k").expect("k");
        let f = super::super::body(m, m.function(e.function).expect("its function"));
        let n = super::super::narrow::barrier_sites(f).len();
        (1..=n as u32).map(|k| returns_to_itself(f, k)).collect()
    }

    #[test]
    fn only_a_barrier_alone_in_its_loop_returns_to_itself() {
        let one = "kernel void k(global int *o, int n) {\n  int a = get_local_id(0);\n  for (int i = 0; i < n; i++) { barrier(CLK_LOCAL_MEM_FENCE); a = a * 3 + 1; }\n  o[get_global_id(0)] = a;\n}\n";
        assert_eq!(returning(one), [true]);
        let two = "kernel void k(global int *o, local int *t, int n) {\n  int a = get_local_id(0);\n  for (int i = 0; i < n; i++) {\n    t[get_local_id(0)] = a; barrier(CLK_LOCAL_MEM_FENCE);\n    a += t[0]; barrier(CLK_LOCAL_MEM_FENCE);\n  }\n  o[get_global_id(0)] = a;\n}\n";
        assert_eq!(returning(two), [false, false]);
        let straight = "kernel void k(global int *o) {\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[get_global_id(0)] = 1;\n}\n";
        assert_eq!(returning(straight), [false]);
    }
}
