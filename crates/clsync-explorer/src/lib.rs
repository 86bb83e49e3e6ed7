//! # clsync-explorer
//!
//! The memory-model explorer of clsync: given an OpenCL litmus test, it
//! enumerates every execution the OpenCL memory model allows, says whether
//! the test's final condition is reachable and whether the program has a
//! data race, and lists the final outcomes. It is written from the model of
//! `shared/litmus/opencl.cat` (Batty, Donaldson and Wickerson, POPL'16,
//! with the scoped SC axiom of Wickerson et al., POPL'17) and calls no
//! external tool.
//!
//! ```
//! use clsync_explorer::{explore, syntax, Options};
//! let test = syntax::parse(
//!     "OPENCL MP\n{ [x]=0; [y]=0; }\n\
//!      P0@wg 0, dev 0 (global int* x, global atomic_int* y) {\n\
//!        *x = 1; atomic_store_explicit(y, 1, memory_order_release);\n}\n\
//!      P1@wg 1, dev 0 (global int* x, global atomic_int* y) {\n\
//!        int r0 = atomic_load_explicit(y, memory_order_acquire); int r1 = *x;\n}\n\
//!      exists (1:r0=1 /\\ 1:r1=0)",
//! ).unwrap();
//! let result = explore(&test, &Options::default()).unwrap();
//! // Release/acquire at device scope: the stale read is forbidden…
//! assert!(!result.reachable);
//! // …but the read of x is not guarded by the flag: an execution that
//! // misses the flag reads x unsynchronized, a data race.
//! assert!(result.race.is_some());
//! ```
//!
//! ## Layers
//!
//! | module | what it is |
//! | --- | --- |
//! | [`syntax`] | Dat3M's and herd's litmus syntaxes, with line/column errors |
//! | [`model`] | events, the relation algebra, and the axioms of `opencl.cat` |
//! | [`enumerate`] | value domains, thread traces, and the `rf`/`co` search |
//! | [`report`] | printing results |
//! | [`expect`] | expectation files (`path,0|1`) and test collection |
//! | [`run`] | running a litmus test on the clsync runtime, as work-items |
//!
//! Where to start reading: [`syntax`] (a litmus file to a program), then
//! [`enumerate`] (its executions), then [`model`] (which are consistent).

pub mod enumerate;
pub mod expect;
pub mod model;
pub mod report;
pub mod run;
pub mod syntax;

use std::path::{Path, PathBuf};

pub use enumerate::{explore, Exploration, ExploreError, Options, Outcome, Race};

/// Why a litmus file could not be explored.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// It could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// It is malformed.
    #[error("{path}:{source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line, column and message.
        source: syntax::ParseError,
    },
    /// It cannot be explored.
    #[error("{path}: {source}")]
    Explore {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ExploreError,
    },
}

/// Reads and parses a litmus file; returns it with its warnings.
pub fn load(path: &Path) -> Result<(syntax::Test, Vec<syntax::Warning>), Error> {
    let src = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    syntax::parse_with_warnings(&src).map_err(|source| Error::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads, parses and explores a litmus file.
pub fn explore_file(path: &Path, options: &Options) -> Result<Exploration, Error> {
    let (test, _) = load(path)?;
    explore(&test, options).map_err(|source| Error::Explore {
        path: path.to_path_buf(),
        source,
    })
}
