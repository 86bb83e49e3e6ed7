//! What can be wrong with a module.

/// A module that cannot be read or is outside what clsync runs. Each
/// message names the id, instruction or capability at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpirvError {
    /// The bytes are not a SPIR-V module.
    #[error("not a SPIR-V module: {0}")]
    Malformed(String),
    /// A capability, addressing model or execution model clsync does not run.
    #[error("unsupported SPIR-V: {0}")]
    Unsupported(String),
    /// The module refers to something it does not define, or defines it in
    /// a way the SPIR-V specification does not allow.
    #[error("invalid SPIR-V: {0}")]
    Invalid(String),
}
