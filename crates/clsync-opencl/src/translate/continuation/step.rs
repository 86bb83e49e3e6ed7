//! The work-item loop's step: where a work-item (or a batch) stops, its
//! place is recorded and the next one runs; after the group's last, the
//! function returns the place, chains the next interval (`chain`) or
//! reports the work-items a narrowed loop left out (`narrow`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, InstBuilder, Value};

use super::{Counters, LANES};
use crate::translate::function::{mem, Fx};

impl Fx<'_, '_> {
    /// The work-item is done with this interval: it reached barrier `k`, or
    /// returned (0). Goes on with the next work-item.
    pub(in crate::translate) fn interval_end(&mut self, k: u32) {
        let next = self.cont.as_ref().expect("a continuation build").next;
        let r = self.b.ins().iconst(types::I32, k as i64);
        self.b.ins().jump(next, &[ir::BlockArg::Value(r)]);
    }

    /// The loop's step, once every block is translated: records where the
    /// work-item stopped and runs the next one, or returns that place once
    /// the last one ran (the caller compares the places in `reached`).
    pub(in crate::translate) fn loop_step(&mut self) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (next, head, mut n, mut sizes, reached) = (c.next, c.head, c.n, c.sizes, c.reached);
        // A narrowed loop ends at its bounds.
        let narrow = c.narrow;
        if let Some((bounds, _)) = narrow {
            (n, sizes[0]) = (bounds.all, bounds.row);
        }
        let (frame, stride) = (c.frame, c.stride);
        let Some(Counters { l, local }) = c.counters else {
            return;
        };
        let chain = c.chain;
        let c_state = c.plan.only_state;
        // An agreed build's work-items all stop where the last one does
        // (`agreed`): their places are told once, at the end.
        let agreed = c.agreed;
        self.b.switch_to_block(next);
        let r = self.b.append_block_param(next, types::I32);
        let step = if self.batched() { LANES } else { 1 };
        if !agreed {
            if let Some(diff) = chain {
                self.chain_note(diff, r);
            }
            let at = self.b.ins().ishl_imm_s(l, 2);
            let at = self.b.ins().iadd(reached, at);
            // A batch's work-items all stopped at one place.
            if step > 1 && step % 4 == 0 {
                // One store of each four places.
                let v = self.b.ins().splat(types::I32X4, r);
                for k in 0..step / 4 {
                    self.b.ins().store(mem(), v, at, 16 * k as i32);
                }
            } else {
                for j in 0..step {
                    self.b.ins().store(mem(), r, at, 4 * j as i32);
                }
            }
        }
        let l1 = self.b.ins().iadd_imm_s(l, step as i64);
        let stride = match step {
            1 => stride,
            _ => self.b.ins().imul_imm_s(stride, step as i64),
        };
        let frame1 = self.b.ins().iadd(frame, stride);
        let x = local[0].expect("x is always counted");
        let x = self.b.ins().iadd_imm_s(x, step as i64);
        // Along a row only x counts; y and z at the row's end.
        let row_end = self.b.ins().icmp(IntCC::Equal, x, sizes[0]);
        let wrap = self.b.create_block();
        let args = |x: Value, yz: [Option<Value>; 2]| {
            let mut a = vec![ir::BlockArg::Value(l1), ir::BlockArg::Value(x)];
            a.extend(yz.into_iter().flatten().map(ir::BlockArg::Value));
            a.push(ir::BlockArg::Value(frame1));
            a
        };
        let same = args(x, [local[1], local[2]]);
        // The next work-item's counters are passed from a block of their
        // own: Cranelift computes an addition of a constant again in each
        // block that uses it, so that the counters' old values die where
        // the new ones are made (made before the branch, with the row's
        // end computing them again, both were live at once, and each step
        // paid a copy per counter).
        let advance = self.b.create_block();
        // (Laid out right after the step, which falls through to it.)
        if let Some(step_block) = self.b.current_block() {
            self.b.insert_block_after(advance, step_block);
        }
        // (The row's end as the first way: Cranelift lays out the second
        // right after the step.)
        self.b.ins().brif(row_end, wrap, &[], advance, &[]);
        self.b.switch_to_block(advance);
        self.b.ins().jump(head, &same);

        self.b.switch_to_block(wrap);
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, l1, n);
        let exit = self.b.create_block();
        let row = self.b.create_block();
        self.b.ins().brif(done, exit, &[], row, &[]);

        self.b.switch_to_block(exit);
        let r = match narrow {
            Some((bounds, end)) => {
                self.b.ins().jump(end, &[ir::BlockArg::Value(r)]);
                self.b.switch_to_block(end);
                // (An agreed build's skipped work-items wait where the
                // others do, its one way out: `agreed_exit` tells it.)
                if !agreed {
                    self.narrow_exit(bounds);
                }
                let r = self.b.block_params(end)[0];
                // Work-items left waiting at another barrier than the
                // state's own: not an interval to chain.
                if let (Some(diff), true) = (chain, Some(bounds.barrier) != c_state) {
                    let n_all = self.cont.as_ref().expect("a continuation build").n;
                    let part = self.b.ins().icmp(IntCC::NotEqual, bounds.all, n_all);
                    let part = self.b.ins().uextend(types::I32, part);
                    let d = self.b.use_var(diff);
                    let d = self.b.ins().bor(d, part);
                    self.b.def_var(diff, d);
                }
                r
            }
            None => r,
        };
        if agreed {
            self.agreed_exit(r);
        }
        match chain {
            Some(diff) => self.chain_exit(diff, r),
            None => {
                self.b.ins().return_(&[r]);
            }
        }

        self.b.switch_to_block(row);
        let zero = self.b.ins().iconst(types::I64, 0);
        let yz = match (local[1], local[2]) {
            (Some(y), z) => {
                let y = self.b.ins().iadd_imm_s(y, 1);
                let wrap_y = self.b.ins().icmp(IntCC::Equal, y, sizes[1]);
                let y = self.b.ins().select(wrap_y, zero, y);
                let z = z.map(|z| {
                    let carry = self.b.ins().uextend(types::I64, wrap_y);
                    self.b.ins().iadd(z, carry)
                });
                [Some(y), z]
            }
            (None, _) => [None, None],
        };
        let next_row = args(zero, yz);
        self.b.ins().jump(head, &next_row);
    }
}
