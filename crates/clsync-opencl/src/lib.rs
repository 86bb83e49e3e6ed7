//! # clsync-opencl
//!
//! OpenCL C kernels on clsync's runtime: `clang-15` and `llvm-spirv-15`
//! compile the source to SPIR-V, [`clsync_spirv`] reads it, Cranelift
//! compiles it to native code, and the kernel runs on the same runtime as
//! Rust kernels: the same ND-ranges, scheduler, barriers, divergence
//! reports and watchdog.
//!
//! ```
//! use clsync::{Buffer, NdRange, Runtime};
//! use clsync_opencl::{Arg, Program};
//!
//! let src = "kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }";
//! let program = Program::build(src, "twice.cl", "")?;
//! let data = Buffer::from_slice(&[1, 2, 3, 4]);
//! program
//!     .kernel("twice")?
//!     .run(&Runtime::new(), NdRange::new([4]), &[Arg::Buffer(&data)])?;
//! assert_eq!(data.to_vec(), vec![2, 4, 6, 8]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Where to start reading: [`Program`] (a build), then [`translate`] (how
//! SPIR-V becomes Cranelift IR), then [`exec`] (the context compiled code
//! runs in, and the launch).
//!
//! Every memory access of compiled code is checked against its object's
//! bounds ([`exec::ctx`]): an access out of bounds or through a null
//! pointer stops the work-item with Oclgrind's report (`Invalid read of
//! size 4 at global memory ...`), and the launch fails naming it.

pub mod cache;
pub mod exec;
pub mod frontend;
mod program;
pub mod sim;
pub mod translate;

pub use clsync_spirv::SpirvError;
pub use exec::image::{ChannelOrder, ChannelType, Image, ImageFormat, ImageShape, Sampler};
pub use exec::{Access, Arg, Findings, MemObject, RunError};
pub use program::{ArgKind, BuildTimes, Kernel, KernelInfo, Param, Program};

use clsync_spirv::{Module, SourceLine};

/// A module clsync cannot compile, or a translation fault.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CompileError {
    /// Something valid that clsync does not translate yet: named.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The module breaks a rule of SPIR-V.
    #[error("invalid SPIR-V: {0}")]
    Invalid(String),
    /// The code generator failed (a bug of clsync's).
    #[error("internal compiler error: {0}")]
    Internal(String),
    /// An error at a place in the source.
    #[error("{at}: in function `{function}`, Op{op}: {inner}")]
    At {
        /// `file:line:column`.
        at: String,
        /// The function.
        function: String,
        /// The SPIR-V instruction.
        op: String,
        /// The error.
        inner: Box<CompileError>,
    },
}

impl From<SpirvError> for CompileError {
    fn from(e: SpirvError) -> Self {
        match e {
            SpirvError::Unsupported(s) => CompileError::Unsupported(s),
            SpirvError::Invalid(s) | SpirvError::Malformed(s) => CompileError::Invalid(s),
        }
    }
}

impl CompileError {
    /// The error placed at `line` of function `name`.
    pub(crate) fn in_function(
        self,
        name: &str,
        m: &Module,
        line: SourceLine,
        op: clsync_spirv::spirv::Op,
    ) -> CompileError {
        if matches!(self, CompileError::At { .. }) {
            return self;
        }
        let at = if line.line == 0 {
            "<unknown line>".to_string()
        } else {
            format!(
                "{}:{}:{}",
                m.file_name(line).rsplit('/').next().unwrap_or(""),
                line.line,
                line.column
            )
        };
        CompileError::At {
            at,
            function: if name.is_empty() {
                "?".into()
            } else {
                name.into()
            },
            op: format!("{op:?}"),
            inner: Box::new(self),
        }
    }
}

/// A program that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The build options are wrong.
    #[error("build options: {0}")]
    Options(String),
    /// The OpenCL C source does not compile: clang's messages.
    #[error("{log}")]
    Compile {
        /// clang's output.
        log: String,
    },
    /// A front-end tool is missing or failed.
    #[error("{0}")]
    Tool(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The SPIR-V module is malformed or unsupported.
    #[error(transparent)]
    Spirv(#[from] SpirvError),
    /// Translation to native code failed.
    #[error(transparent)]
    Translate(CompileError),
    /// No kernel of that name.
    #[error("no kernel named `{name}` in the program (kernels: {})", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    NoKernel {
        /// The name asked for.
        name: String,
        /// The kernels there are.
        available: Vec<String>,
    },
}
