//! Image instructions: each a call of `exec::image`'s helpers.
//!
//! An image value is its handle in the launch (from 1); a sampler value is
//! its `CLK_*` bits; a sampled image (`OpSampledImage`) is the image's
//! handle with the sampler's bits in the high half. Coordinates travel as
//! the bits of up to three `int` or `float` lanes, a texel as four 32-bit
//! lanes; a read's result comes back through the context's scratch area.

use clsync_spirv::spirv::Op;
use clsync_spirv::Instruction;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::function::{mem, Fx};
use crate::exec::ctx::CTX_SCRATCH;
use crate::CompileError;

impl Fx<'_, '_> {
    /// Translates `inst` if it is an image instruction; false if not.
    pub(super) fn image(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        match inst.class.opcode {
            Op::SampledImage => {
                let img = self.get1(self.id(inst, 0)?)?;
                let sampler = self.get1(self.id(inst, 1)?)?;
                let high = self.b.ins().ishl_imm_s(sampler, 32);
                let v = self.b.ins().bor(img, high);
                self.def(inst, vec![v]);
            }
            Op::ImageSampleExplicitLod | Op::ImageRead => {
                let handle = self.get1(self.id(inst, 0)?)?;
                let coord = self.id(inst, 1)?;
                let (lanes, float) = self.coordinates(coord)?;
                let site = self.site();
                let args = [
                    self.ctx,
                    handle,
                    lanes[0],
                    lanes[1],
                    lanes[2],
                    self.b.ins().iconst(types::I32, float as i64),
                    self.b.ins().iconst(types::I32, site),
                ];
                self.helper("clsync_image_read", &args);
                let ts = self.result_types(inst)?;
                let out = ts
                    .iter()
                    .enumerate()
                    .map(|(k, t)| {
                        self.b
                            .ins()
                            .load(*t, mem(), self.ctx, CTX_SCRATCH + 4 * k as i32)
                    })
                    .collect();
                self.def(inst, out);
            }
            Op::ImageWrite => {
                let handle = self.get1(self.id(inst, 0)?)?;
                let (lanes, _) = self.coordinates(self.id(inst, 1)?)?;
                let texel = self.get(self.id(inst, 2)?)?;
                let mut bits: Vec<Value> = texel
                    .iter()
                    .map(|v| {
                        let v = match self.b.func.dfg.value_type(*v) {
                            types::F32 => self.b.ins().bitcast(types::I32, MemFlagsData::new(), *v),
                            _ => *v,
                        };
                        self.b.ins().uextend(types::I64, v)
                    })
                    .collect();
                while bits.len() < 4 {
                    bits.push(self.b.ins().iconst(types::I64, 0));
                }
                let pair = |fx: &mut Self, a: Value, b: Value| {
                    let b = fx.b.ins().ishl_imm_s(b, 32);
                    fx.b.ins().bor(a, b)
                };
                let lo = pair(self, bits[0], bits[1]);
                let hi = pair(self, bits[2], bits[3]);
                let site = self.site();
                let args = [
                    self.ctx,
                    handle,
                    lanes[0],
                    lanes[1],
                    lanes[2],
                    lo,
                    hi,
                    self.b.ins().iconst(types::I32, site),
                ];
                self.helper("clsync_image_write", &args);
            }
            Op::ImageQuerySizeLod
            | Op::ImageQuerySize
            | Op::ImageQueryOrder
            | Op::ImageQueryFormat => {
                let handle = self.get1(self.id(inst, 0)?)?;
                let ts = self.result_types(inst)?;
                let first = match inst.class.opcode {
                    Op::ImageQueryOrder => 3,
                    Op::ImageQueryFormat => 4,
                    _ => 0,
                };
                let mut out = Vec::new();
                for (k, t) in ts.iter().enumerate() {
                    let what = self.b.ins().iconst(types::I32, first + k as i64);
                    let ctx = self.ctx;
                    let v = self.helper("clsync_image_query", &[ctx, handle, what])[0];
                    out.push(if *t == types::I64 {
                        self.b.ins().uextend(types::I64, v)
                    } else {
                        v
                    });
                }
                self.def(inst, out);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A coordinate's lanes as three 64-bit words of their bits (missing
    /// lanes 0), and whether they are floats.
    fn coordinates(
        &mut self,
        id: clsync_spirv::spirv::Word,
    ) -> Result<([Value; 3], bool), CompileError> {
        let v = self.get(id)?;
        let float = v
            .first()
            .is_some_and(|x| self.b.func.dfg.value_type(*x) == types::F32);
        let mut lanes = Vec::new();
        for x in v.iter().take(3) {
            let t = self.b.func.dfg.value_type(*x);
            let w = match t {
                types::F32 => self.b.ins().bitcast(types::I32, MemFlagsData::new(), *x),
                types::I64 => self.b.ins().ireduce(types::I32, *x),
                _ => *x,
            };
            lanes.push(self.b.ins().uextend(types::I64, w));
        }
        while lanes.len() < 3 {
            lanes.push(self.b.ins().iconst(types::I64, 0));
        }
        Ok(([lanes[0], lanes[1], lanes[2]], float))
    }
}
