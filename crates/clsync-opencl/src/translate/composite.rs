//! Vectors, structs and arrays as flattened values: construction,
//! extraction and insertion by literal indices, shuffles, dynamic
//! extraction and insertion.

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Instruction, Type};
use cranelift_codegen::ir::{self, InstBuilder};

use super::cl_type;
use super::function::Fx;
use crate::CompileError;

impl Fx<'_, '_> {
    /// Vectors, structs and arrays as flattened values.
    pub(super) fn composite(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        match inst.class.opcode {
            Op::CompositeConstruct => {
                let mut out = Vec::new();
                for k in 0..inst.operands.len() {
                    out.extend(self.get(self.id(inst, k)?)?);
                }
                self.def(inst, out);
            }
            Op::CompositeExtract => {
                let src = self.id(inst, 0)?;
                let v = self.get(src)?;
                let (start, n) = self.leaf_range(self.type_of(src)?, inst, 1)?;
                self.def(inst, v[start..start + n].to_vec());
            }
            Op::CompositeInsert => {
                let obj = self.get(self.id(inst, 0)?)?;
                let comp = self.id(inst, 1)?;
                let mut v = self.get(comp)?;
                let (start, n) = self.leaf_range(self.type_of(comp)?, inst, 2)?;
                v[start..start + n].copy_from_slice(&obj);
                self.def(inst, v);
            }
            Op::VectorShuffle => {
                let mut all = self.get(self.id(inst, 0)?)?;
                all.extend(self.get(self.id(inst, 1)?)?);
                let elem = match self.m.ty(inst.result_type.unwrap_or(0))? {
                    Type::Vector { elem, .. } => *elem,
                    _ => {
                        return Err(CompileError::Invalid(
                            "OpVectorShuffle of a non-vector".into(),
                        ))
                    }
                };
                let et = cl_type(self.m, elem)?;
                let mut out = Vec::new();
                for k in 2..inst.operands.len() {
                    let c = self.lit(inst, k)?;
                    out.push(match all.get(c as usize) {
                        Some(v) => *v,
                        None => self.zero(et),
                    });
                }
                self.def(inst, out);
            }
            Op::VectorExtractDynamic => {
                let v = self.get(self.id(inst, 0)?)?;
                let idx = self.get1(self.id(inst, 1)?)?;
                let mut r = v[0];
                for (k, lane) in v.iter().enumerate().skip(1) {
                    let is = self
                        .b
                        .ins()
                        .icmp_imm_s(ir::condcodes::IntCC::Equal, idx, k as i64);
                    r = self.b.ins().select(is, *lane, r);
                }
                self.def(inst, vec![r]);
            }
            Op::VectorInsertDynamic => {
                let v = self.get(self.id(inst, 0)?)?;
                let c = self.get1(self.id(inst, 1)?)?;
                let idx = self.get1(self.id(inst, 2)?)?;
                let mut out = Vec::new();
                for (k, lane) in v.iter().enumerate() {
                    let is = self
                        .b
                        .ins()
                        .icmp_imm_s(ir::condcodes::IntCC::Equal, idx, k as i64);
                    out.push(self.b.ins().select(is, c, *lane));
                }
                self.def(inst, out);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The leaves that literal indices from operand `from` select in a
    /// value of type `ty`.
    pub(super) fn leaf_range(
        &self,
        mut ty: Word,
        inst: &Instruction,
        from: usize,
    ) -> Result<(usize, usize), CompileError> {
        let mut start = 0usize;
        for k in from..inst.operands.len() {
            let idx = self.lit(inst, k)?;
            let counts = self.m.part_leaf_counts(ty)?;
            if idx as usize >= counts.len() {
                return Err(CompileError::Invalid(format!(
                    "index {idx} into a composite of {} parts",
                    counts.len()
                )));
            }
            start += counts[..idx as usize].iter().sum::<usize>();
            ty = self.m.part_type(ty, idx)?;
        }
        Ok((start, self.m.leaves(ty)?.len()))
    }
}
