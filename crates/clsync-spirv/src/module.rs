//! The module model: what [`Module::from_bytes`] builds and checks.

use std::collections::HashMap;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{
    AddressingModel, Capability, Decoration, ExecutionModel, Op, StorageClass, Word,
};

use crate::types::{Layout, Leaf, Type};
use crate::SpirvError;

/// The capabilities of OpenCL C kernels that clsync runs. Any other is
/// refused on load, by name.
const SUPPORTED: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Float16Buffer,
    Capability::Float64,
    Capability::Int64,
    Capability::Int64Atomics,
    Capability::Int16,
    Capability::Int8,
    Capability::GenericPointer,
    Capability::Groups,
    Capability::ImageBasic,
    Capability::LiteralSampler,
];

/// A constant, by value.
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    /// An integer, float or bool's bits (`OpConstant`, `OpConstantTrue`,
    /// `OpConstantFalse`), zero-extended.
    Scalar {
        /// Its type.
        ty: Word,
        /// Its bits.
        bits: u64,
    },
    /// `OpConstantComposite`: the constituents' ids.
    Composite {
        /// Its type.
        ty: Word,
        /// One id per member, element or component.
        parts: Vec<Word>,
    },
    /// `OpConstantNull`, `OpUndef` at module scope: all zero bits.
    Null {
        /// Its type.
        ty: Word,
    },
    /// `OpSpecConstantOp` of an address computation (a constant
    /// `getelementptr` of a module-scope variable): the instruction.
    Op {
        /// Its type.
        ty: Word,
        /// The operation.
        op: Op,
        /// Its operands' ids.
        operands: Vec<Word>,
    },
    /// `OpConstantSampler`: addressing mode, normalized, filter mode.
    Sampler {
        /// Its type.
        ty: Word,
        /// The sampler's bits as OpenCL C's `CLK_*` constants combine them.
        bits: u64,
    },
}

impl Constant {
    /// The constant's type.
    pub fn ty(&self) -> Word {
        match self {
            Constant::Scalar { ty, .. }
            | Constant::Composite { ty, .. }
            | Constant::Null { ty }
            | Constant::Op { ty, .. }
            | Constant::Sampler { ty, .. } => *ty,
        }
    }
}

/// A module-scope `OpVariable`.
#[derive(Clone, Debug)]
pub struct GlobalVariable {
    /// Its result id.
    pub id: Word,
    /// Its pointer type.
    pub ty: Word,
    /// The pointee.
    pub pointee: Word,
    /// Its address space.
    pub storage: StorageClass,
    /// Its initializer, a constant id.
    pub initializer: Option<Word>,
    /// Its name (`OpName`), or the built-in it is.
    pub name: String,
}

/// Where an instruction came from in the OpenCL C source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SourceLine {
    /// The `OpString` id of the file; 0 where unknown.
    pub file: Word,
    /// Line, from 1; 0 where unknown.
    pub line: u32,
    /// Column, from 1; 0 where unknown.
    pub column: u32,
}

/// A basic block: its label and its instructions, each with the source line
/// that was in force, the terminator last. `OpLine`, `OpNoLine` and
/// debug-info instructions are taken out.
#[derive(Clone, Debug)]
pub struct Block {
    /// The label id.
    pub label: Word,
    /// Its instructions.
    pub instructions: Vec<(Instruction, SourceLine)>,
}

/// A function with a body.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its result id.
    pub id: Word,
    /// Its name, where the module gives one.
    pub name: String,
    /// Its return type.
    pub ret: Word,
    /// Its parameters: (id, type).
    pub params: Vec<(Word, Word)>,
    /// Its blocks, in the module's order; the first is the entry.
    pub blocks: Vec<Block>,
}

/// An `OpEntryPoint Kernel`.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    /// The kernel's name.
    pub name: String,
    /// The function.
    pub function: Word,
    /// `reqd_work_group_size`, if the kernel declares one.
    pub required_local_size: Option<[u32; 3]>,
}

/// The decorations of one id.
#[derive(Clone, Debug, Default)]
pub struct Decorations {
    /// Each decoration with its literal operands.
    pub list: Vec<(Decoration, Vec<Operand>)>,
}

impl Decorations {
    /// Whether `d` is present.
    pub fn has(&self, d: Decoration) -> bool {
        self.list.iter().any(|(x, _)| *x == d)
    }
    /// The operands of the first `d`.
    pub fn get(&self, d: Decoration) -> Option<&[Operand]> {
        self.list
            .iter()
            .find(|(x, _)| *x == d)
            .map(|(_, o)| o.as_slice())
    }
}

/// A loaded, checked module.
#[derive(Debug)]
pub struct Module {
    /// Types by id.
    pub types: HashMap<Word, Type>,
    /// Constants by id.
    pub constants: HashMap<Word, Constant>,
    /// Module-scope variables, in order.
    pub globals: Vec<GlobalVariable>,
    /// Functions with bodies, in order.
    pub functions: Vec<Function>,
    /// Imported functions (declarations without a body): id to name.
    pub imports: HashMap<Word, String>,
    /// Kernels.
    pub entry_points: Vec<EntryPoint>,
    /// Decorations by target id (group decorations applied).
    pub decorations: HashMap<Word, Decorations>,
    /// `OpName`s.
    pub names: HashMap<Word, String>,
    /// `OpString`s.
    pub strings: HashMap<Word, String>,
    /// `OpExtInstImport`s: id to set name (`OpenCL.std`, ...).
    pub ext_sets: HashMap<Word, String>,
    /// Strings llvm-spirv keeps of OpenCL metadata: `kernel_arg_type.K.a,b,`
    /// and `kernel_arg_type_qual.K.,,`, by kernel.
    pub kernel_arg_types: HashMap<String, Vec<String>>,
}

/// The module's words without its module-scope `OpExtInst`s.
///
/// llvm-spirv writes the `OpenCL.DebugInfo.100` records of types, files and
/// functions at module scope, where rspirv's loader takes no `OpExtInst`.
/// They are non-semantic (the `OpLine`s inside functions carry the source
/// lines), so they are dropped before loading. Each instruction's word
/// count is checked on the way: a count of zero or one that runs past the
/// end is an error, not a loop or a panic.
fn without_module_ext_insts(bytes: &[u8]) -> Result<Vec<u32>, SpirvError> {
    const EXT_INST: u32 = 12;
    const FUNCTION: u32 = 54;
    const FUNCTION_END: u32 = 56;
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
        if opcode != EXT_INST || in_function {
            out.extend_from_slice(&words[i..i + count]);
        }
        i += count;
    }
    Ok(out)
}

fn malformed(s: impl Into<String>) -> SpirvError {
    SpirvError::Malformed(s.into())
}
fn invalid(s: impl Into<String>) -> SpirvError {
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
        let words = without_module_ext_insts(bytes)?;
        let dr = dr::load_words(words).map_err(|e| malformed(e.to_string()))?;
        Self::from_dr(dr)
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
            if matches!(op, Op::Line | Op::NoLine) {
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
                Op::TypeImage => Some(Type::Opaque("image")),
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

    /// The type `id`, or an error naming it.
    pub fn ty(&self, id: Word) -> Result<&Type, SpirvError> {
        self.types
            .get(&id)
            .ok_or_else(|| invalid(format!("%{id} is not a type")))
    }

    /// The function `id`.
    pub fn function(&self, id: Word) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// The entry point named `name`.
    pub fn entry_point(&self, name: &str) -> Option<&EntryPoint> {
        self.entry_points.iter().find(|e| e.name == name)
    }

    /// The layout of type `id` in memory.
    pub fn layout(&self, id: Word) -> Result<Layout, SpirvError> {
        let l = |size: u64| Layout { size, align: size };
        Ok(match self.ty(id)? {
            Type::Void => l(1),
            Type::Bool => l(1),
            Type::Int(w) | Type::Float(w) => l((*w as u64).div_ceil(8).max(1)),
            Type::Pointer { .. } | Type::Event | Type::Opaque(_) => l(8),
            Type::Vector { elem, count } => {
                let e = self.layout(*elem)?.size;
                let n = if *count == 3 { 4 } else { *count as u64 };
                l(e * n)
            }
            Type::Array { elem, len } => {
                let e = self.layout(*elem)?;
                Layout {
                    size: e.size * len,
                    align: e.align,
                }
            }
            Type::Struct { members, packed } => {
                let (mut off, mut align) = (0u64, 1u64);
                for m in members {
                    let ml = self.layout(*m)?;
                    if !packed {
                        off = off.next_multiple_of(ml.align);
                        align = align.max(ml.align);
                    }
                    off += ml.size;
                }
                Layout {
                    size: off.next_multiple_of(align),
                    align,
                }
            }
            Type::Function { .. } => {
                return Err(invalid(format!("%{id}: a function type has no layout")))
            }
        })
    }

    /// The byte offsets of a struct's members.
    pub fn member_offsets(&self, id: Word) -> Result<Vec<u64>, SpirvError> {
        let Type::Struct { members, packed } = self.ty(id)? else {
            return Err(invalid(format!("%{id} is not a struct")));
        };
        let mut off = 0u64;
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            let ml = self.layout(*m)?;
            if !packed {
                off = off.next_multiple_of(ml.align);
            }
            out.push(off);
            off += ml.size;
        }
        Ok(out)
    }

    /// The scalars of type `id`, flattened in order, with their offsets.
    pub fn leaves(&self, id: Word) -> Result<Vec<Leaf>, SpirvError> {
        let mut out = Vec::new();
        self.leaves_into(id, 0, &mut out)?;
        Ok(out)
    }

    fn leaves_into(&self, id: Word, base: u64, out: &mut Vec<Leaf>) -> Result<(), SpirvError> {
        const MAX_LEAVES: usize = 4096;
        if out.len() > MAX_LEAVES {
            return Err(SpirvError::Unsupported(format!(
                "a value of type %{id} has more than {MAX_LEAVES} scalars; clsync holds aggregate values in registers"
            )));
        }
        match self.ty(id)? {
            Type::Vector { elem, count } => {
                let e = self.layout(*elem)?.size;
                for k in 0..*count as u64 {
                    out.push(Leaf {
                        offset: base + k * e,
                        ty: *elem,
                    });
                }
            }
            Type::Array { elem, len } => {
                let e = self.layout(*elem)?.size;
                for k in 0..*len {
                    self.leaves_into(*elem, base + k * e, out)?;
                }
            }
            Type::Struct { members, .. } => {
                let offs = self.member_offsets(id)?;
                for (m, o) in members.clone().iter().zip(offs) {
                    self.leaves_into(*m, base + o, out)?;
                }
            }
            Type::Void | Type::Function { .. } => {}
            _ => out.push(Leaf {
                offset: base,
                ty: id,
            }),
        }
        Ok(())
    }

    /// How many leaves each member (struct), element (array) or component
    /// (vector) of `id` has, in order.
    pub fn part_leaf_counts(&self, id: Word) -> Result<Vec<usize>, SpirvError> {
        Ok(match self.ty(id)? {
            Type::Vector { count, .. } => vec![1; *count as usize],
            Type::Array { elem, len } => vec![self.leaves(*elem)?.len(); *len as usize],
            Type::Struct { members, .. } => members
                .iter()
                .map(|m| self.leaves(*m).map(|l| l.len()))
                .collect::<Result<_, _>>()?,
            _ => return Err(invalid(format!("%{id} is not a composite type"))),
        })
    }

    /// The type of part `index` of composite type `id`.
    pub fn part_type(&self, id: Word, index: u64) -> Result<Word, SpirvError> {
        Ok(match self.ty(id)? {
            Type::Vector { elem, .. } | Type::Array { elem, .. } => *elem,
            Type::Struct { members, .. } => *members.get(index as usize).ok_or_else(|| {
                invalid(format!(
                    "member {index} of struct %{id}, which has {}",
                    members.len()
                ))
            })?,
            _ => return Err(invalid(format!("%{id} is not a composite type"))),
        })
    }

    /// The source file name of a line, or `"<unknown>"`.
    pub fn file_name(&self, line: SourceLine) -> &str {
        self.strings
            .get(&line.file)
            .map(String::as_str)
            .unwrap_or("<unknown>")
    }
}
