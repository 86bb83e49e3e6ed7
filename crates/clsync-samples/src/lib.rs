//! Sample kernels.
