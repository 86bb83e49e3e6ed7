//! One test per rule of the five specification extracts in `shared/spec/`.
//! Each test is named `r<file number>_<rule>` and quotes the rule it checks;
//! each would fail if the runtime broke that rule.
//!
//! The rules that are about what must not compile (operators on atomic
//! types, unsupported atomic types, atomics in private memory, illegal
//! orders and scopes) are `compile_fail` doctests in `src/atomics/mod.rs`,
//! `src/memory/scalar.rs`, `src/sync/order.rs`, `src/sync/scope.rs` and
//! `src/sync/flags.rs`; `cargo test --doc` runs them.
//!
//! One module per extract, named by its file number.

#[path = "../common/mod.rs"]
mod common;

mod r000;
mod r001;
mod r002;
mod r003;
mod r004;

use clsync::*;
use common::rt;

/// Every work-item writes its phase to local memory, waits at a work-group
/// barrier, and checks all other work-items' slots; counts violations.
pub(crate) fn group_lockstep(range: NdRange, phases: u32, barrier: fn(&WorkItem)) -> u32 {
    let bad = Buffer::<AtomicUint>::new(1);
    rt().launch(&Launch::new("wg_lockstep", range), |wi| {
        let n: usize = (0..3).map(|d| wi.get_local_size(d)).product();
        let s = wi.local_array::<u32>(n);
        let l = wi.get_local_linear_id();
        for phase in 1..=phases {
            s.set(l, phase);
            barrier(wi);
            if (0..n).any(|m| s.get(m) != phase) {
                bad.at(0).fetch_add(1);
            }
            barrier(wi);
        }
    })
    .unwrap();
    bad.at(0).load()
}
