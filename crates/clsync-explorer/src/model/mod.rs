//! The OpenCL memory model as code: events and their tags ([`event`]), the
//! relation algebra ([`relation`]), and the relations and axioms of
//! `opencl.cat` ([`opencl`]).

pub mod event;
pub mod opencl;
pub mod relation;
