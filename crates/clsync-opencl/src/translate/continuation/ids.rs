//! The work-item's ids in a work-item loop: the ones its code reads,
//! made from the loop's counters, and the ones a call reads in the
//! context, which the runtime makes from the linear id.

use std::collections::HashMap;

use cranelift_codegen::ir::{types, InstBuilder, Value};

use crate::exec::ctx::{builtin, CTX_BUILTINS};
use crate::translate::function::{fixed, Fx};
use cranelift_frontend::Variable;

impl Fx<'_, '_> {
    /// A built-in that every work-item of the group shares, from the
    /// context (a load Cranelift hoists out of the work-item loop).
    pub(super) fn group_value(&mut self, i: usize) -> Value {
        let ctx = self.ctx;
        self.b
            .ins()
            .load(types::I64, fixed(), ctx, CTX_BUILTINS + 8 * i as i32)
    }

    /// The loop head's ids of the current work-item whose bits are set in
    /// `mask` (by index of the context's built-ins), from the loop's
    /// counters and the group's constants. The loop counts every dimension
    /// `mask` needs (`prologue` decides from the same mask).
    pub(super) fn head_ids(&mut self, mask: u64) -> HashMap<usize, Value> {
        let c = self.cont.as_ref().expect("a continuation build");
        let (Some(k), n) = (c.counters, c.n) else {
            return HashMap::new();
        };
        let wanted = |i: usize| mask & (1 << i) != 0;
        let counted = |d: usize| k.local[d].expect("the loop counts what its code reads");
        let mut ids = HashMap::new();
        let mut global = [None; 3];
        let lin = wanted(builtin::GLOBAL_LINEAR_ID);
        for (d, g) in global.iter_mut().enumerate() {
            if wanted(builtin::GLOBAL_ID + d) || lin {
                let gid = self.group_value(builtin::GROUP_ID + d);
                let size = self.group_value(builtin::ENQUEUED_LOCAL_SIZE + d);
                let off = self.group_value(builtin::GLOBAL_OFFSET + d);
                let base = self.b.ins().imul(gid, size);
                let base = self.b.ins().iadd(base, off);
                let v = self.b.ins().iadd(base, counted(d));
                *g = Some(v);
                if wanted(builtin::GLOBAL_ID + d) {
                    ids.insert(builtin::GLOBAL_ID + d, v);
                }
            }
            if wanted(builtin::LOCAL_ID + d) {
                ids.insert(builtin::LOCAL_ID + d, counted(d));
            }
        }
        if wanted(builtin::LOCAL_LINEAR_ID) {
            ids.insert(builtin::LOCAL_LINEAR_ID, k.l);
        }
        if lin {
            // (gz - oz) * GSy * GSx + (gy - oy) * GSx + (gx - ox).
            let mut v = self.b.ins().iconst(types::I64, 0);
            for (d, g) in global.iter().enumerate().rev() {
                let size = self.group_value(builtin::GLOBAL_SIZE + d);
                let off = self.group_value(builtin::GLOBAL_OFFSET + d);
                let rel = self.b.ins().isub(g.expect("made above"), off);
                v = self.b.ins().imul(v, size);
                v = self.b.ins().iadd(v, rel);
            }
            ids.insert(builtin::GLOBAL_LINEAR_ID, v);
        }
        let sub_group = [
            builtin::SUB_GROUP_ID,
            builtin::SUB_GROUP_LOCAL_ID,
            builtin::SUB_GROUP_SIZE,
        ];
        if sub_group.iter().any(|i| wanted(*i)) {
            let sg = self.group_value(builtin::MAX_SUB_GROUP_SIZE);
            let one = self.b.ins().iconst(types::I64, 1);
            let sg = self.b.ins().umax(sg, one);
            let id = self.b.ins().udiv(k.l, sg);
            let start = self.b.ins().imul(id, sg);
            let lid = self.b.ins().isub(k.l, start);
            let left = self.b.ins().isub(n, start);
            let size = self.b.ins().umin(sg, left);
            ids.insert(builtin::SUB_GROUP_ID, id);
            ids.insert(builtin::SUB_GROUP_LOCAL_ID, lid);
            ids.insert(builtin::SUB_GROUP_SIZE, size);
        }
        ids
    }

    /// In a continuation build, stores every id of the current work-item
    /// in the context, for a call that may read them there (a called
    /// function, the fault handler, any runtime call given the context):
    /// the runtime makes them from the local linear id
    /// (`exec::loops::clsync_item_ids`, through a trampoline that keeps
    /// every register), so that the loop keeps none of the values they are
    /// made of.
    pub(in crate::translate) fn store_ids(&mut self) {
        if let Some(named) = self.cont.as_ref().and_then(|c| c.unnamed) {
            self.name_item(named);
            return;
        }
        let Some(c) = self.cont.as_ref().filter(|c| !c.ids_in_ctx) else {
            return;
        };
        let Some(k) = c.counters else { return };
        let cold = self.s.cold["clsync_item_ids"];
        let ctx = self.ctx;
        self.cold_call(cold, &[ctx, k.l]);
    }

    /// A checked build whose loop head left the work-item unnamed
    /// (`Cont::unnamed`): names it to the runtime, with its ids stored in
    /// the context (`exec::loops::clsync_next_item`), unless the interval
    /// did already.
    fn name_item(&mut self, named: Variable) {
        let Some(k) = self.cont.as_ref().and_then(|c| c.counters) else {
            return;
        };
        let done = self.b.use_var(named);
        let call = self.b.create_block();
        let join = self.b.create_block();
        self.b.ins().brif(done, join, &[], call, &[]);
        self.b.switch_to_block(call);
        let r = self.func_ref("clsync_next_item");
        let ctx = self.ctx;
        self.b.ins().call(r, &[ctx, k.l]);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.def_var(named, yes);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }
}
