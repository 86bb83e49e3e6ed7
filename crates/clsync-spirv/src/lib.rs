//! # clsync-spirv
//!
//! Reads an OpenCL kernel SPIR-V module (what `llvm-spirv` writes, what
//! `clCreateProgramWithIL` takes) into the form clsync's compiler
//! translates: each result id's [`Type`] with its OpenCL C layout, the
//! constants, the module-scope variables, the functions with their blocks,
//! the decorations, the names and the source lines of `OpLine`.
//!
//! This crate reads and checks; it generates nothing. The compiler in
//! `clsync-opencl` takes a [`Module`] and translates its functions.
//!
//! ```
//! // A module is checked on load: a word stream that is not SPIR-V is an
//! // error that says why, never a panic.
//! let e = clsync_spirv::Module::from_bytes(&[1, 2, 3, 4]).unwrap_err();
//! assert!(e.to_string().contains("SPIR-V"), "{e}");
//! ```
//!
//! Where to start reading: [`Module::from_bytes`] (the checks, in the order
//! of the module's sections), then [`types`] (the layout rules of the OpenCL
//! C specification, section 6.3.5 "Alignment of Types").

mod error;
mod module;
mod reader;
pub mod types;

pub use error::SpirvError;
pub use module::{
    Block, Constant, Decorations, EntryPoint, Function, GlobalVariable, Module, SourceLine,
};
pub use rspirv::dr::{Instruction, Operand};
pub use rspirv::spirv;
pub use types::{Layout, Type};
