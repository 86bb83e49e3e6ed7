//! Running litmus tests on the clsync runtime (see `run` docs).
