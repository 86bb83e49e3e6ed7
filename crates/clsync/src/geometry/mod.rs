//! ND-range geometry: validating a launch's sizes and computing every
//! work-item id function of OpenCL C 2.0 from them.
//!
//! [`NdRange`] is what a user writes; [`Geometry`] is the validated, resolved
//! form the scheduler runs; [`ItemIds`] is one work-item's place in it.

mod ids;
mod range;

pub use ids::ItemIds;
pub(crate) use ids::{sub_group_len, GroupIds};
pub use range::{
    Geometry, NdRange, RangeError, DEFAULT_SUB_GROUP_SIZE, MAX_GROUPS, MAX_SUB_GROUP_SIZE,
    MAX_WORK_GROUP_SIZE,
};
