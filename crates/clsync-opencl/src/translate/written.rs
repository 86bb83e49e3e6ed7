//! Which of a kernel's pointer parameters it may write through.
//!
//! A buffer that no work-item writes during a launch has no race (in the
//! memory model of the OpenCL specification, section 3.3, a data race
//! takes two conflicting accesses, and accesses conflict only where one of
//! them writes), so a checked launch need not tell the checker of its
//! reads: a histogram's or a matrix product's input is most of its
//! accesses. This module proves, for each parameter of a kernel,
//! that nothing the kernel runs can write what it points to; the launch
//! then marks the buffers bound only to such parameters
//! (`exec::bind`).
//!
//! The proof follows every pointer made from a parameter through the
//! functions the kernel reaches: access chains, casts, copies, phis and
//! selects make a pointer with the roots of their operands; a private
//! variable whose address is only ever the pointer of its own loads and
//! stores gives a pointer loaded from it the stored ones' roots (clang's
//! unoptimized code keeps every parameter in such a variable; a pointer
//! stored to any other variable escapes); a call gives each callee parameter its
//! argument's roots and the call's result the roots the callee returns. A
//! root is *written* where a pointer of it is a store's target, an
//! atomic's, a copy's destination or an argument of an extended
//! instruction that may write (`vstoren`, `modf`'s out-parameter...); and
//! where a pointer of it goes anywhere else (stored to other memory,
//! converted to an integer, passed to a function without a body, used by
//! an instruction this module does not know), since the analysis loses it
//! there. A pointer made from an integer (`OpConvertUToPtr`) could be any
//! pointer: a kernel that makes one may write every parameter.
//!
//! A pointer loaded from memory other than such a variable has no roots:
//! any pointer of a root that reached memory escaped there, and its root is
//! written already. (A pointer that a previous launch left in a buffer is
//! not valid in this one: OpenCL C gives buffer pointers meaning only
//! within the launch that received them.)

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, OpenclStd100Op as X, StorageClass, Word};
use clsync_spirv::{Function, Module, Operand, Type};

/// For each parameter of kernel function `f`, whether it is a pointer
/// that may be written through (true for every pointer when the analysis
/// cannot tell, and for kernels of more than 64 parameters; false for
/// the others).
pub(crate) fn written_params(m: &Module, f: &Function) -> Vec<bool> {
    let pointers: Vec<bool> = f
        .params
        .iter()
        .map(|(_, ty)| matches!(m.ty(*ty), Ok(Type::Pointer { .. })))
        .collect();
    let all = || pointers.clone();
    let n = f.params.len();
    if n > 64 {
        return all();
    }
    let functions = super::reachable_from(m, vec![f.id]);
    let mut a = Analysis {
        m,
        roots: HashMap::new(),
        held: HashMap::new(),
        returns: HashMap::new(),
        written: 0,
        variables: HashSet::new(),
        changed: true,
    };
    for (i, (p, _)) in f.params.iter().enumerate() {
        if pointers[i] {
            a.roots.insert(*p, 1 << i);
        }
    }
    let bodies: Vec<&Function> = functions.iter().filter_map(|id| m.function(*id)).collect();
    for g in &bodies {
        for (inst, _) in g.blocks.iter().flat_map(|b| &b.instructions) {
            let private = matches!(
                inst.operands.first(),
                Some(Operand::StorageClass(StorageClass::Function))
            );
            if let (Op::Variable, true, Some(id)) = (inst.class.opcode, private, inst.result_id) {
                a.variables.insert(id);
            }
            if inst.class.opcode == Op::ConvertUToPtr {
                return all();
            }
        }
    }
    // A variable whose address goes anywhere but the pointer of a load or
    // store of it (a call, an access chain, a store of the address) may be
    // read and written through another pointer, which the analysis does
    // not follow: what it holds is not tracked, and a pointer stored to it
    // escapes.
    for g in &bodies {
        for (inst, _) in g.blocks.iter().flat_map(|b| &b.instructions) {
            let op = inst.class.opcode;
            for (k, o) in inst.operands.iter().enumerate() {
                let Operand::IdRef(w) = o else { continue };
                let direct = k == 0
                    && matches!(
                        op,
                        Op::Load | Op::Store | Op::LifetimeStart | Op::LifetimeStop
                    );
                if !direct {
                    a.variables.remove(w);
                }
            }
        }
    }
    // The roots only grow, and there are at most 64 bits of them per id:
    // the loop ends.
    while a.changed {
        a.changed = false;
        for g in &bodies {
            a.function(g);
        }
    }
    (0..n).map(|i| a.written & (1 << i) != 0).collect()
}

struct Analysis<'m> {
    m: &'m Module,
    /// The parameters each id's pointer may be made from, a bit each.
    roots: HashMap<Word, u64>,
    /// The roots of the pointers stored to each private variable.
    held: HashMap<Word, u64>,
    /// The roots of the pointers each function returns.
    returns: HashMap<Word, u64>,
    /// The parameters that may be written through.
    written: u64,
    /// The function-scope variables of the functions analysed.
    variables: HashSet<Word>,
    changed: bool,
}

impl Analysis<'_> {
    fn of(&self, id: Word) -> u64 {
        self.roots.get(&id).copied().unwrap_or(0)
    }

    fn operand(&self, ops: &[Operand], k: usize) -> u64 {
        match ops.get(k) {
            Some(Operand::IdRef(w)) => self.of(*w),
            _ => 0,
        }
    }

    /// Every root of the operands from `from` on.
    fn all(&self, ops: &[Operand], from: usize) -> u64 {
        (from..ops.len()).fold(0, |r, k| r | self.operand(ops, k))
    }

    fn add(map: &mut HashMap<Word, u64>, id: Word, bits: u64, changed: &mut bool) {
        let e = map.entry(id).or_insert(0);
        if *e | bits != *e {
            *e |= bits;
            *changed = true;
        }
    }

    fn write(&mut self, bits: u64) {
        if self.written | bits != self.written {
            self.written |= bits;
            self.changed = true;
        }
    }

    fn function(&mut self, g: &Function) {
        for (inst, _) in g.blocks.iter().flat_map(|b| &b.instructions) {
            let ops = &inst.operands;
            let result = inst.result_id;
            let made = match inst.class.opcode {
                op if makes_pointer(op) => self.all(ops, 0),
                Op::Load => match ops.first() {
                    Some(Operand::IdRef(p)) if self.variables.contains(p) => {
                        self.held.get(p).copied().unwrap_or(0)
                    }
                    _ => 0,
                },
                Op::Store => {
                    self.write(self.operand(ops, 0));
                    let value = self.operand(ops, 1);
                    match ops.first() {
                        Some(Operand::IdRef(p)) if self.variables.contains(p) => {
                            Self::add(&mut self.held, *p, value, &mut self.changed)
                        }
                        _ => self.write(value),
                    }
                    0
                }
                // The target is written, the source read.
                Op::CopyMemory | Op::CopyMemorySized => {
                    self.write(self.operand(ops, 0));
                    0
                }
                Op::GroupAsyncCopy => {
                    self.write(self.operand(ops, 1));
                    0
                }
                Op::FunctionCall => {
                    let Some(Operand::IdRef(callee)) = ops.first() else {
                        continue;
                    };
                    match self.m.function(*callee) {
                        Some(c) => {
                            for (k, (p, _)) in c.params.iter().enumerate() {
                                let bits = self.operand(ops, k + 1);
                                Self::add(&mut self.roots, *p, bits, &mut self.changed);
                            }
                            self.returns.get(callee).copied().unwrap_or(0)
                        }
                        None => {
                            self.write(self.all(ops, 1));
                            0
                        }
                    }
                }
                Op::ReturnValue => {
                    let bits = self.operand(ops, 0);
                    Self::add(&mut self.returns, g.id, bits, &mut self.changed);
                    0
                }
                Op::ExtInst => {
                    if !reads_only(self.m, ops) {
                        self.write(self.all(ops, 2));
                    }
                    0
                }
                // Comparisons and differences of pointers read nothing.
                Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => 0,
                Op::LifetimeStart | Op::LifetimeStop => 0,
                // Anything else that takes a pointer of a root loses it.
                _ => {
                    self.write(self.all(ops, 0));
                    0
                }
            };
            if let (Some(id), true) = (result, made != 0) {
                Self::add(&mut self.roots, id, made, &mut self.changed);
            }
        }
    }
}

/// Whether `OpExtInst` with operands `ops` only reads through its pointer
/// operands (or is not OpenCL's: a debug record).
fn reads_only(m: &Module, ops: &[Operand]) -> bool {
    let set = match ops.first() {
        Some(Operand::IdRef(s)) => m.ext_sets.get(s).map(String::as_str),
        _ => None,
    };
    if set != Some("OpenCL.std") {
        return true;
    }
    let n = match ops.get(1) {
        Some(Operand::LiteralExtInstInteger(n)) => *n,
        _ => return false,
    };
    matches!(
        X::from_u32(n),
        Some(
            X::vloadn | X::vload_half | X::vload_halfn | X::vloada_halfn | X::prefetch | X::printf
        )
    )
}

/// Whether `op` makes a pointer from its pointer operands (an access
/// chain, a cast, a copy, a phi or a select): the pointer reaches what
/// they reach.
pub(super) fn makes_pointer(op: Op) -> bool {
    derives_pointer(op) || matches!(op, Op::Phi | Op::Select)
}

/// Whether `op` makes a pointer from the one pointer it takes first (an
/// access chain, a cast, a copy): the pointer reaches what that one does
/// (or is null, for an explicit cast out of the generic space).
pub(super) fn derives_pointer(op: Op) -> bool {
    matches!(
        op,
        Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain
            | Op::Bitcast
            | Op::GenericCastToPtr
            | Op::GenericCastToPtrExplicit
            | Op::PtrCastToGeneric
            | Op::CopyObject
    )
}
