//! Reading a module: the binary through rspirv, then each section into the
//! model, with the checks that make a module clsync runs.

use std::collections::HashMap;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{AddressingModel, Capability, Decoration, ExecutionModel, Op, Word};

use crate::module::{
    Block, Constant, Decorations, EntryPoint, Function, GlobalVariable, Module, SourceLine,
};
use crate::types::Type;
use crate::SpirvError;

/// The capabilities of OpenCL C kernels that clsync runs. Any other is
/// refused on load, by name.
const SUPPORTED: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Float16Buffer,
    Capability::Float16,
    Capability::Float64,
    Capability::Int64,
    Capability::Int64Atomics,
    Capability::Int16,
    Capability::Int8,
    Capability::GenericPointer,
    Capability::Groups,
    Capability::ImageBasic,
    Capability::ImageReadWrite,
    Capability::Image1D,
    Capability::Sampled1D,
    // image1d_buffer_t (read-only or write-only, and read-write).
    Capability::SampledBuffer,
    Capability::ImageBuffer,
    Capability::LiteralSampler,
    // cl_khr_subgroup_* (ballot, shuffles, non-uniform arithmetic, votes).
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformClustered,
    // Integers of other widths than 8..64 bits (SPV_INTEL_arbitrary_precision_integers,
    // which llvm-spirv uses for LLVM's `i31` and the like): widened on load,
    // values kept within their width (`widen_odd_ints`).
    Capability::ArbitraryPrecisionIntegersALTERA,
    // SPV_EXT_optnone: `-cl-opt-disable` builds mark functions not to be
    // optimized, a hint with no meaning to the code's behaviour.
    Capability::OptNoneEXT,
];

/// The module's words without its module-scope `OpExtInst`s and its
/// internal linkage decorations.
///
/// - llvm-spirv writes the `OpenCL.DebugInfo.100` records of types, files
///   and functions at module scope, where rspirv's loader takes no
///   `OpExtInst`. They are non-semantic (the `OpLine`s inside functions
///   carry the source lines), so they are dropped before loading.
/// - llvm-spirv-15 decorates the helpers it writes for an OpenCL C 2.0
///   atomic whose order or scope is a run-time value
///   (`__translate_ocl_memory_order`, `__translate_ocl_memory_scope`) with
///   `LinkageAttributes` of linkage type 0x7FFFFFFE, its own marker for
///   internal linkage, which is no SPIR-V linkage type and which rspirv
///   refuses. A function without linkage attributes is internal to its
///   module, so the decoration is dropped: it says nothing more.
///
/// Each instruction's word count is checked on the way: a count of zero
/// or one that runs past the end is an error, not a loop or a panic.
fn without_module_ext_insts(bytes: &[u8]) -> Result<Vec<u32>, SpirvError> {
    const EXT_INST: u32 = 12;
    const FUNCTION: u32 = 54;
    const FUNCTION_END: u32 = 56;
    const DECORATE: u32 = 71;
    const LINKAGE_ATTRIBUTES: u32 = 41;
    const LLVM_SPIRV_INTERNAL: u32 = 0x7FFF_FFFE;
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut i = 5;
    let mut in_function = false;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return Err(malformed(format!(
                "the instruction at word {i} (opcode {opcode}) has word count {count}, with {} words left",
                words.len() - i
            )));
        }
        match opcode {
            FUNCTION => in_function = true,
            FUNCTION_END => in_function = false,
            _ => {}
        }
        let internal = opcode == DECORATE
            && count >= 4
            && words[i + 2] == LINKAGE_ATTRIBUTES
            && words[i + count - 1] == LLVM_SPIRV_INTERNAL;
        if (opcode != EXT_INST || in_function) && !internal {
            out.extend_from_slice(&words[i..i + count]);
        }
        i += count;
    }
    Ok(out)
}

/// Integer types of a width other than 8, 16, 32 or 64 bits (LLVM makes
/// an `i31` of a value it knows fits, a `switch`'s selector say): widened
/// in place to the next of those, which the reader and the code generator
/// take, and returned by type id with their declared width, so that code
/// can keep such a value within it. Wider than 64 bits is refused.
fn widen_odd_ints(words: &mut [u32]) -> Result<std::collections::HashMap<Word, u32>, SpirvError> {
    const TYPE_INT: u32 = 21;
    let mut narrow = std::collections::HashMap::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if count == 0 {
            break;
        }
        if words[i] & 0xffff == TYPE_INT && count == 4 && i + 3 < words.len() {
            let (id, width) = (words[i + 1], words[i + 2]);
            if !matches!(width, 8 | 16 | 32 | 64) {
                let wide = match width {
                    1..=8 => 8,
                    9..=16 => 16,
                    17..=32 => 32,
                    33..=64 => 64,
                    _ => {
                        return Err(SpirvError::Unsupported(format!(
                            "a {width}-bit integer type (%{id})"
                        )))
                    }
                };
                words[i + 2] = wide;
                narrow.insert(id, width);
            }
        }
        i += count;
    }
    Ok(narrow)
}

/// An `OpSpecConstantOp` taken out of the words: its inner opcode and its
/// operands.
type SpecOp = (u32, Vec<Word>);

/// Replaces each module-scope `OpSpecConstantOp` by an `OpConstantNull` of
/// its type and id, and returns the operations by id, to be put back as
/// [`Constant::Op`]s once the module is loaded.
///
/// rspirv decodes an `OpSpecConstantOp`'s operands by the grammar of its
/// inner opcode without minding that a variadic operand may be absent: the
/// constant `getelementptr` that llvm-spirv writes for `&array[1]` in a
/// program-scope initializer (an `OpPtrAccessChain` with no further
/// indexes) fails to load as "reached word limit". Every operand of the
/// address computations clsync folds is an id, so the words are taken
/// as they are.
fn lift_spec_constant_ops(words: &mut Vec<u32>) -> HashMap<Word, SpecOp> {
    const SPEC_CONSTANT_OP: u32 = 52;
    const CONSTANT_NULL: u32 = 46;
    const FUNCTION: u32 = 54;
    let mut ops = HashMap::new();
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5.min(words.len())]);
    let mut i = 5;
    while i < words.len() {
        let count = ((words[i] >> 16) as usize).max(1);
        let opcode = words[i] & 0xffff;
        if opcode == FUNCTION {
            out.extend_from_slice(&words[i..]);
            break;
        }
        let end = (i + count).min(words.len());
        if opcode == SPEC_CONSTANT_OP && count >= 4 && end == i + count {
            let (ty, id, inner) = (words[i + 1], words[i + 2], words[i + 3]);
            ops.insert(id, (inner, words[i + 4..end].to_vec()));
            out.extend_from_slice(&[(3 << 16) | CONSTANT_NULL, ty, id]);
        } else {
            out.extend_from_slice(&words[i..end]);
        }
        i = end;
    }
    *words = out;
    ops
}

fn malformed(s: impl Into<String>) -> SpirvError {
    SpirvError::Malformed(s.into())
}
pub(crate) fn invalid(s: impl Into<String>) -> SpirvError {
    SpirvError::Invalid(s.into())
}

fn id_at(inst: &Instruction, i: usize) -> Result<Word, SpirvError> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(w))
        | Some(Operand::IdScope(w))
        | Some(Operand::IdMemorySemantics(w)) => Ok(*w),
        other => Err(invalid(format!(
            "Op{:?} %{}: operand {i} is {other:?}, not an id",
            inst.class.opcode,
            inst.result_id.unwrap_or(0)
        ))),
    }
}

fn lit_at(inst: &Instruction, i: usize) -> Result<u64, SpirvError> {
    match inst.operands.get(i) {
        Some(Operand::LiteralBit32(w)) => Ok(*w as u64),
        Some(Operand::LiteralBit64(w)) => Ok(*w),
        other => Err(invalid(format!(
            "Op{:?} %{}: operand {i} is {other:?}, not a literal number",
            inst.class.opcode,
            inst.result_id.unwrap_or(0)
        ))),
    }
}

fn result(inst: &Instruction) -> Result<Word, SpirvError> {
    inst.result_id
        .ok_or_else(|| invalid(format!("Op{:?} has no result id", inst.class.opcode)))
}

impl Module {
    /// Reads and checks a SPIR-V binary (little-endian words, as
    /// `llvm-spirv` writes them).
    ///
    /// Refused, with the reason: bytes that are not SPIR-V; a capability
    /// outside OpenCL C kernels' (named); a 32-bit addressing model (clsync
    /// runs `spir64`); an entry point that is not a kernel; a reference to
    /// an id the module does not define.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, SpirvError> {
        if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
            return Err(malformed(format!(
                "{} bytes is not a whole number of words with a five-word header",
                bytes.len()
            )));
        }
        let magic = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if magic != 0x0723_0203 {
            return Err(malformed(format!(
                "the magic number is {magic:#010x}, not 0x07230203"
            )));
        }
        let mut words = without_module_ext_insts(bytes)?;
        let narrow = widen_odd_ints(&mut words)?;
        let spec_ops = lift_spec_constant_ops(&mut words);
        let dr = dr::load_words(words).map_err(|e| malformed(e.to_string()))?;
        let mut m = Self::from_dr(dr)?;
        m.narrow = narrow;
        for (id, (inner, operands)) in spec_ops {
            let op = Op::from_u32(inner).ok_or_else(|| {
                invalid(format!("OpSpecConstantOp %{id} of unknown opcode {inner}"))
            })?;
            let Some(Constant::Null { ty }) = m.constants.get(&id) else {
                return Err(invalid(format!("OpSpecConstantOp %{id} was not read")));
            };
            let ty = *ty;
            m.constants.insert(id, Constant::Op { ty, op, operands });
        }
        Ok(m)
    }

    fn from_dr(dr: dr::Module) -> Result<Module, SpirvError> {
        for c in &dr.capabilities {
            if let Some(Operand::Capability(cap)) = c.operands.first() {
                if !SUPPORTED.contains(cap) {
                    return Err(SpirvError::Unsupported(format!(
                        "capability {cap:?} (clsync runs OpenCL C kernels: {})",
                        SUPPORTED
                            .iter()
                            .map(|c| format!("{c:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
        if let Some(mm) = &dr.memory_model {
            if let Some(Operand::AddressingModel(am)) = mm.operands.first() {
                if *am != AddressingModel::Physical64 {
                    return Err(SpirvError::Unsupported(format!(
                        "addressing model {am:?}: clsync runs 64-bit modules (-target spir64)"
                    )));
                }
            }
        }
        let mut m = Module {
            types: HashMap::new(),
            constants: HashMap::new(),
            undefined: Default::default(),
            narrow: Default::default(),
            images: Default::default(),
            globals: Vec::new(),
            functions: Vec::new(),
            imports: HashMap::new(),
            entry_points: Vec::new(),
            decorations: HashMap::new(),
            names: HashMap::new(),
            strings: HashMap::new(),
            ext_sets: HashMap::new(),
            kernel_arg_types: HashMap::new(),
        };
        for i in &dr.ext_inst_imports {
            if let Some(Operand::LiteralString(s)) = i.operands.first() {
                m.ext_sets.insert(result(i)?, s.clone());
            }
        }
        for i in &dr.debug_string_source {
            if i.class.opcode == Op::String {
                if let Some(Operand::LiteralString(s)) = i.operands.first() {
                    m.strings.insert(result(i)?, s.clone());
                    if let Some(rest) = s.strip_prefix("kernel_arg_type.") {
                        if let Some((k, list)) = rest.split_once('.') {
                            let v = list.split(',').map(str::to_string).collect::<Vec<_>>();
                            let v = v[..v.len().saturating_sub(1)].to_vec();
                            m.kernel_arg_types.insert(k.to_string(), v);
                        }
                    }
                }
            }
        }
        for i in &dr.debug_names {
            if i.class.opcode == Op::Name {
                if let (Some(Operand::IdRef(t)), Some(Operand::LiteralString(s))) =
                    (i.operands.first(), i.operands.get(1))
                {
                    m.names.insert(*t, s.clone());
                }
            }
        }
        m.read_decorations(&dr)?;
        m.read_types_and_values(&dr)?;
        m.read_functions(&dr)?;
        m.read_entry_points(&dr)?;
        Ok(m)
    }

    fn read_decorations(&mut self, dr: &dr::Module) -> Result<(), SpirvError> {
        let mut groups: HashMap<Word, Decorations> = HashMap::new();
        for i in &dr.annotations {
            match i.class.opcode {
                Op::Decorate => {
                    let target = id_at(i, 0)?;
                    let Some(Operand::Decoration(d)) = i.operands.get(1) else {
                        return Err(invalid("OpDecorate without a decoration"));
                    };
                    self.decorations
                        .entry(target)
                        .or_default()
                        .list
                        .push((*d, i.operands[2..].to_vec()));
                }
                Op::DecorationGroup => {
                    let g = result(i)?;
                    let d = self.decorations.remove(&g).unwrap_or_default();
                    groups.insert(g, d);
                }
                Op::GroupDecorate => {
                    let g = id_at(i, 0)?;
                    let d = groups
                        .get(&g)
                        .cloned()
                        .ok_or_else(|| invalid(format!("OpGroupDecorate of unknown group %{g}")))?;
                    for t in 1..i.operands.len() {
                        let t = id_at(i, t)?;
                        self.decorations
                            .entry(t)
                            .or_default()
                            .list
                            .extend(d.list.iter().cloned());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn read_types_and_values(&mut self, dr: &dr::Module) -> Result<(), SpirvError> {
        for i in &dr.types_global_values {
            let op = i.class.opcode;
            // A forward pointer only announces the pointer type that a
            // recursive struct (a list's node) names before it is
            // declared; the OpTypePointer that follows defines it.
            if matches!(op, Op::Line | Op::NoLine | Op::TypeForwardPointer) {
                continue;
            }
            let id = result(i)?;
            let ty = match op {
                Op::TypeVoid => Some(Type::Void),
                Op::TypeBool => Some(Type::Bool),
                Op::TypeInt => Some(Type::Int(lit_at(i, 0)? as u32)),
                Op::TypeFloat => Some(Type::Float(lit_at(i, 0)? as u32)),
                Op::TypeVector => Some(Type::Vector {
                    elem: id_at(i, 0)?,
                    count: lit_at(i, 1)? as u32,
                }),
                Op::TypeArray => {
                    let len_id = id_at(i, 1)?;
                    let len = match self.constants.get(&len_id) {
                        Some(Constant::Scalar { bits, .. }) => *bits,
                        _ => {
                            return Err(invalid(format!(
                                "array type %{id}: length %{len_id} is not a constant"
                            )))
                        }
                    };
                    Some(Type::Array {
                        elem: id_at(i, 0)?,
                        len,
                    })
                }
                Op::TypeStruct => Some(Type::Struct {
                    members: (0..i.operands.len())
                        .map(|k| id_at(i, k))
                        .collect::<Result<_, _>>()?,
                    packed: self
                        .decorations
                        .get(&id)
                        .is_some_and(|d| d.has(Decoration::CPacked)),
                }),
                Op::TypePointer => {
                    let Some(Operand::StorageClass(storage)) = i.operands.first() else {
                        return Err(invalid(format!("pointer type %{id} without storage class")));
                    };
                    Some(Type::Pointer {
                        storage: *storage,
                        pointee: id_at(i, 1)?,
                    })
                }
                Op::TypeFunction => Some(Type::Function {
                    ret: id_at(i, 0)?,
                    params: (1..i.operands.len())
                        .map(|k| id_at(i, k))
                        .collect::<Result<_, _>>()?,
                }),
                Op::TypeEvent => Some(Type::Event),
                Op::TypeImage => {
                    if let Some(Operand::Dim(d)) = i.operands.get(1) {
                        let arrayed = lit_at(i, 3).unwrap_or(0) != 0;
                        self.images.insert(id, (*d as u32, arrayed));
                    }
                    Some(Type::Opaque("image"))
                }
                Op::TypeSampler => Some(Type::Opaque("sampler")),
                Op::TypeSampledImage => Some(Type::Opaque("sampled image")),
                Op::TypeOpaque => Some(Type::Opaque("opaque")),
                Op::TypeQueue => Some(Type::Opaque("queue")),
                Op::TypeReserveId => Some(Type::Opaque("reserve id")),
                Op::TypePipe => Some(Type::Opaque("pipe")),
                Op::TypeDeviceEvent => Some(Type::Opaque("device event")),
                _ => None,
            };
            if let Some(t) = ty {
                self.types.insert(id, t);
                continue;
            }
            let ty = i.result_type.unwrap_or(0);
            let c = match op {
                Op::Constant | Op::SpecConstant => {
                    let bits = match (i.operands.first(), i.operands.get(1)) {
                        (Some(Operand::LiteralBit32(lo)), Some(Operand::LiteralBit32(hi))) => {
                            (*lo as u64) | ((*hi as u64) << 32)
                        }
                        (Some(Operand::LiteralBit32(lo)), _) => *lo as u64,
                        (Some(Operand::LiteralBit64(v)), _) => *v,
                        o => return Err(invalid(format!("OpConstant %{id} with operands {o:?}"))),
                    };
                    Some(Constant::Scalar { ty, bits })
                }
                Op::ConstantTrue | Op::SpecConstantTrue => Some(Constant::Scalar { ty, bits: 1 }),
                Op::ConstantFalse | Op::SpecConstantFalse => Some(Constant::Scalar { ty, bits: 0 }),
                Op::ConstantComposite | Op::SpecConstantComposite => Some(Constant::Composite {
                    ty,
                    parts: (0..i.operands.len())
                        .map(|k| id_at(i, k))
                        .collect::<Result<_, _>>()?,
                }),
                Op::ConstantNull | Op::Undef => Some(Constant::Null { ty }),
                Op::SpecConstantOp => {
                    let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
                        return Err(invalid(format!("OpSpecConstantOp %{id} without an opcode")));
                    };
                    Some(Constant::Op {
                        ty,
                        op: *op,
                        operands: (1..i.operands.len())
                            .map(|k| id_at(i, k))
                            .collect::<Result<_, _>>()?,
                    })
                }
                Op::ConstantSampler => {
                    let addressing = match i.operands.first() {
                        Some(Operand::SamplerAddressingMode(a)) => *a as u64,
                        _ => 0,
                    };
                    let normalized = lit_at(i, 1).unwrap_or(0);
                    let filter = match i.operands.get(2) {
                        Some(Operand::SamplerFilterMode(f)) => *f as u64,
                        _ => 0,
                    };
                    // CLK_NORMALIZED_COORDS_TRUE = 1, CLK_ADDRESS_* = n << 1,
                    // CLK_FILTER_NEAREST = 0x10, CLK_FILTER_LINEAR = 0x20.
                    Some(Constant::Sampler {
                        ty,
                        bits: normalized | (addressing << 1) | ((filter + 1) << 4),
                    })
                }
                _ => None,
            };
            if let Some(c) = c {
                if op == Op::Undef {
                    self.undefined.insert(id);
                }
                self.constants.insert(id, c);
                continue;
            }
            if op == Op::Variable {
                let Some(Operand::StorageClass(storage)) = i.operands.first() else {
                    return Err(invalid(format!("variable %{id} without storage class")));
                };
                let pointee = match self.types.get(&ty) {
                    Some(Type::Pointer { pointee, .. }) => *pointee,
                    _ => {
                        return Err(invalid(format!(
                            "variable %{id}: type %{ty} is not a pointer"
                        )))
                    }
                };
                let initializer = i.operands.get(1).map(|_| id_at(i, 1)).transpose()?;
                self.globals.push(GlobalVariable {
                    id,
                    ty,
                    pointee,
                    storage: *storage,
                    initializer,
                    name: self.names.get(&id).cloned().unwrap_or_default(),
                });
                continue;
            }
            return Err(SpirvError::Unsupported(format!(
                "module-scope instruction Op{op:?} (%{id})"
            )));
        }
        Ok(())
    }

    fn read_functions(&mut self, dr: &dr::Module) -> Result<(), SpirvError> {
        for f in &dr.functions {
            let def = f
                .def
                .as_ref()
                .ok_or_else(|| invalid("a function without OpFunction"))?;
            let id = result(def)?;
            let name = self.names.get(&id).cloned().unwrap_or_default();
            if f.blocks.is_empty() {
                let link = self
                    .decorations
                    .get(&id)
                    .and_then(|d| d.get(Decoration::LinkageAttributes))
                    .and_then(|o| match o.first() {
                        Some(Operand::LiteralString(s)) => Some(s.clone()),
                        _ => None,
                    })
                    .unwrap_or(name);
                self.imports.insert(id, link);
                continue;
            }
            let params = f
                .parameters
                .iter()
                .map(|p| Ok((result(p)?, p.result_type.unwrap_or(0))))
                .collect::<Result<Vec<_>, SpirvError>>()?;
            let mut blocks = Vec::with_capacity(f.blocks.len());
            let mut line = SourceLine::default();
            for b in &f.blocks {
                let label = b
                    .label
                    .as_ref()
                    .and_then(|l| l.result_id)
                    .ok_or_else(|| invalid(format!("a block of %{id} without a label")))?;
                let mut instructions = Vec::with_capacity(b.instructions.len());
                for i in &b.instructions {
                    match i.class.opcode {
                        Op::Line => {
                            line = SourceLine {
                                file: id_at(i, 0)?,
                                line: lit_at(i, 1)? as u32,
                                column: lit_at(i, 2)? as u32,
                            };
                        }
                        Op::NoLine => line = SourceLine::default(),
                        Op::ExtInst if self.is_debug_info(i) => {}
                        _ => instructions.push((i.clone(), line)),
                    }
                }
                blocks.push(Block {
                    label,
                    instructions,
                });
            }
            self.functions.push(Function {
                id,
                name,
                ret: def.result_type.unwrap_or(0),
                params,
                blocks,
            });
        }
        Ok(())
    }

    fn is_debug_info(&self, i: &Instruction) -> bool {
        matches!(i.operands.first(), Some(Operand::IdRef(set))
            if self.ext_sets.get(set).is_some_and(|s| s.contains("DebugInfo")))
    }

    fn read_entry_points(&mut self, dr: &dr::Module) -> Result<(), SpirvError> {
        for e in &dr.entry_points {
            let Some(Operand::ExecutionModel(model)) = e.operands.first() else {
                return Err(invalid("OpEntryPoint without an execution model"));
            };
            let function = id_at(e, 1)?;
            let Some(Operand::LiteralString(name)) = e.operands.get(2) else {
                return Err(invalid("OpEntryPoint without a name"));
            };
            if *model != ExecutionModel::Kernel {
                return Err(SpirvError::Unsupported(format!(
                    "entry point `{name}` is a {model:?}, not a Kernel"
                )));
            }
            if !self.functions.iter().any(|f| f.id == function) {
                return Err(invalid(format!(
                    "entry point `{name}` names %{function}, which has no body"
                )));
            }
            let mut required_local_size = None;
            for m in &dr.execution_modes {
                if id_at(m, 0)? == function {
                    if let Some(Operand::ExecutionMode(rspirv::spirv::ExecutionMode::LocalSize)) =
                        m.operands.get(1)
                    {
                        required_local_size = Some([
                            lit_at(m, 2)? as u32,
                            lit_at(m, 3)? as u32,
                            lit_at(m, 4)? as u32,
                        ]);
                    }
                }
            }
            self.entry_points.push(EntryPoint {
                name: name.clone(),
                function,
                required_local_size,
            });
        }
        Ok(())
    }
}
