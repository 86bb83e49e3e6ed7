//! .sim files (placeholder)
