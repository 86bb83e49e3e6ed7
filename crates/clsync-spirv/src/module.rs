//! The module model: what [`Module::from_bytes`] builds and checks (the
//! reading is in `reader`, the layout of types in `types`).

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use crate::reader::invalid;
use crate::types::Type;
use crate::SpirvError;

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
    /// Integer types the module declared with a width other than 8, 16, 32
    /// or 64 bits, by id: their declared width (each reads as the next of
    /// those; values of it are kept within the declared width).
    pub narrow: HashMap<Word, u32>,
    /// Image types by id: their dimensionality as SPIR-V numbers it (`Dim`:
    /// 0 1D, 1 2D, 2 3D, 5 buffer) and whether they are arrays.
    pub images: HashMap<Word, (u32, bool)>,
    /// The module-scope `OpUndef`s among them (each a [`Constant::Null`]
    /// to code that wants bits), for checkers of uninitialized values.
    pub undefined: std::collections::HashSet<Word>,
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

impl Module {
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

    /// The source file name of a line, or `"<unknown>"`.
    pub fn file_name(&self, line: SourceLine) -> &str {
        self.strings
            .get(&line.file)
            .map(String::as_str)
            .unwrap_or("<unknown>")
    }
}
