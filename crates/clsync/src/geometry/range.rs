//! [`NdRange`], its validation, and the resolved [`Geometry`].

use std::fmt;

/// The largest work-group (product of the local sizes) the runtime accepts,
/// the `CL_DEVICE_MAX_WORK_GROUP_SIZE` of clsync's CPU device.
///
/// Every work-item of a group is a resumable task with its own stack on one
/// worker thread, so the limit is set by memory, not by threads: 4096 items
/// with the default 64 KiB stacks reserve 256 MiB of address space per worker,
/// of which only the touched pages are committed.
pub const MAX_WORK_GROUP_SIZE: usize = 4096;

/// The most work-groups a launch may have: the scheduler numbers them in 32
/// bits (a device's `CL_DEVICE_MAX_WORK_ITEM_SIZES` bounds real ranges far
/// below this).
pub const MAX_GROUPS: usize = u32::MAX as usize;

/// The largest sub-group size a launch may ask for.
pub const MAX_SUB_GROUP_SIZE: usize = 64;

/// The sub-group size used when a launch does not choose one.
///
/// 32 matches the most common GPU SIMD width, so kernels tuned for it behave
/// the same here; a group smaller than this has one, smaller, sub-group.
pub const DEFAULT_SUB_GROUP_SIZE: usize = 32;

/// The product of local sizes the runtime aims for when it chooses the local
/// size itself.
const AUTO_LOCAL_TARGET: usize = 256;

/// An ND-range as the user writes it: global size, optional global offset and
/// local size, sub-group size, and whether non-uniform work-groups are allowed.
///
/// # Example
///
/// ```
/// use clsync::NdRange;
///
/// let range = NdRange::new([1000, 30]).local([64, 2]).offset([5, 0]).sub_group_size(16);
/// let geo = range.resolve().unwrap();
/// assert_eq!(geo.num_groups(), [16, 15, 1]); // non-uniform in dimension 0
/// assert_eq!(geo.sub_group_size(), 16);
///
/// // A zero size is rejected before anything runs.
/// assert!(NdRange::new([0]).resolve().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdRange {
    dims: usize,
    global: [usize; 3],
    offset: [usize; 3],
    local: Option<[usize; 3]>,
    local_dims: usize,
    offset_dims: usize,
    sub_group_size: Option<usize>,
    uniform_only: bool,
}

/// Sizes in one, two or three dimensions: `usize`, `[usize; 1]`,
/// `[usize; 2]` or `[usize; 3]`.
pub trait Dims {
    /// The sizes padded with `pad`, and how many were given.
    fn padded(self, pad: usize) -> ([usize; 3], usize);
}

impl Dims for usize {
    fn padded(self, pad: usize) -> ([usize; 3], usize) {
        ([self, pad, pad], 1)
    }
}

impl<const N: usize> Dims for [usize; N] {
    fn padded(self, pad: usize) -> ([usize; 3], usize) {
        let mut out = [pad; 3];
        for (o, v) in out.iter_mut().zip(self) {
            *o = v;
        }
        (out, N)
    }
}

impl NdRange {
    /// An ND-range with the given global size (1 to 3 dimensions), no offset,
    /// a local size chosen by the runtime, and non-uniform groups allowed.
    pub fn new(global: impl Dims) -> Self {
        let (global, dims) = global.padded(1);
        NdRange {
            dims,
            global,
            offset: [0; 3],
            local: None,
            local_dims: dims,
            offset_dims: dims,
            sub_group_size: None,
            uniform_only: false,
        }
    }

    /// Sets the local (work-group) size; it must have as many dimensions as
    /// the global size.
    pub fn local(mut self, local: impl Dims) -> Self {
        let (local, n) = local.padded(1);
        self.local = Some(local);
        self.local_dims = n;
        self
    }

    /// Sets the global offset; it must have as many dimensions as the global
    /// size.
    pub fn offset(mut self, offset: impl Dims) -> Self {
        let (offset, n) = offset.padded(0);
        self.offset = offset;
        self.offset_dims = n;
        self
    }

    /// Sets the sub-group size, 1 to [`MAX_SUB_GROUP_SIZE`]; the default is
    /// [`DEFAULT_SUB_GROUP_SIZE`].
    pub fn sub_group_size(mut self, size: usize) -> Self {
        self.sub_group_size = Some(size);
        self
    }

    /// Requires uniform work-groups, as `-cl-uniform-work-group-size` does:
    /// the local size must then divide the global size in every dimension.
    pub fn uniform_work_groups(mut self, uniform: bool) -> Self {
        self.uniform_only = uniform;
        self
    }

    /// Validates the range and resolves the local size.
    pub fn resolve(&self) -> Result<Geometry, RangeError> {
        let dims = self.dims;
        if !(1..=3).contains(&dims) {
            return Err(RangeError::Dimensions { dims });
        }
        if self.local_dims != dims {
            return Err(RangeError::DimensionMismatch {
                what: "local size",
                given: self.local_dims,
                dims,
            });
        }
        if self.offset_dims != dims {
            return Err(RangeError::DimensionMismatch {
                what: "global offset",
                given: self.offset_dims,
                dims,
            });
        }
        for d in 0..dims {
            if self.global[d] == 0 {
                return Err(RangeError::ZeroGlobal { dim: d });
            }
            if self.global[d].checked_add(self.offset[d]).is_none() {
                return Err(RangeError::Overflow { dim: d });
            }
        }
        let local = match self.local {
            Some(local) => {
                if let Some(dim) = local[..dims].iter().position(|&l| l == 0) {
                    return Err(RangeError::ZeroLocal { dim });
                }
                local
            }
            None => auto_local(&self.global, dims),
        };
        let total = product(&local);
        if total > MAX_WORK_GROUP_SIZE {
            return Err(RangeError::LocalTooLarge {
                local: local[..dims].to_vec(),
                total,
            });
        }
        if self.uniform_only {
            let sizes = self.global.iter().zip(&local).take(dims);
            for (dim, (&global, &local)) in sizes.enumerate() {
                if global % local != 0 {
                    return Err(RangeError::NonUniform { dim, global, local });
                }
            }
        }
        let sg = self.sub_group_size.unwrap_or(DEFAULT_SUB_GROUP_SIZE);
        if !(1..=MAX_SUB_GROUP_SIZE).contains(&sg) {
            return Err(RangeError::SubGroupSize { size: sg });
        }
        let mut num_groups = [1; 3];
        for d in 0..3 {
            num_groups[d] = self.global[d].div_ceil(local[d]);
        }
        if product(&num_groups) > MAX_GROUPS {
            return Err(RangeError::TooManyGroups {
                groups: num_groups[..dims].to_vec(),
            });
        }
        Ok(Geometry {
            dims,
            global: self.global,
            offset: self.offset,
            local,
            num_groups,
            sub_group_size: sg,
        })
    }
}

/// The product of `sizes`, saturating at `usize::MAX` (which every limit
/// it is compared with rejects).
fn product(sizes: &[usize; 3]) -> usize {
    sizes
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .unwrap_or(usize::MAX)
}

/// Chooses a local size: in each dimension in turn, the largest divisor of
/// the global size within what is left of [`AUTO_LOCAL_TARGET`], so that the
/// chosen groups are always uniform.
fn auto_local(global: &[usize; 3], dims: usize) -> [usize; 3] {
    let mut local = [1; 3];
    let mut budget = AUTO_LOCAL_TARGET;
    for d in 0..dims {
        let best = (1..=budget.min(global[d]))
            .rev()
            .find(|l| global[d] % l == 0)
            .unwrap_or(1);
        local[d] = best;
        budget /= best;
    }
    local
}

/// Why an ND-range was rejected. Every variant names the dimension or value
/// that is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// The range has no dimensions or more than three.
    #[error("an ND-range has 1 to 3 dimensions, not {dims}")]
    Dimensions {
        /// Dimensions given.
        dims: usize,
    },
    /// The local size or offset has a different number of dimensions.
    #[error("the {what} has {given} dimension(s) but the global size has {dims}")]
    DimensionMismatch {
        /// Which part of the range.
        what: &'static str,
        /// Dimensions it has.
        given: usize,
        /// Dimensions of the global size.
        dims: usize,
    },
    /// A global size is zero.
    #[error("global size is zero in dimension {dim}")]
    ZeroGlobal {
        /// The dimension.
        dim: usize,
    },
    /// A local size is zero.
    #[error("local size is zero in dimension {dim}")]
    ZeroLocal {
        /// The dimension.
        dim: usize,
    },
    /// Global size plus offset overflows.
    #[error("global size plus global offset overflows in dimension {dim}")]
    Overflow {
        /// The dimension.
        dim: usize,
    },
    /// The work-group is larger than [`MAX_WORK_GROUP_SIZE`].
    #[error("local size {local:?} makes work-groups of {total} work-items; the limit is {max}", max = MAX_WORK_GROUP_SIZE)]
    LocalTooLarge {
        /// The local size.
        local: Vec<usize>,
        /// Its product.
        total: usize,
    },
    /// Uniform work-groups were required and the local size does not divide
    /// the global size.
    #[error("uniform work-groups required, but local size {local} does not divide global size {global} in dimension {dim}")]
    NonUniform {
        /// The dimension.
        dim: usize,
        /// Global size there.
        global: usize,
        /// Local size there.
        local: usize,
    },
    /// The range has more than [`MAX_GROUPS`] work-groups.
    #[error("the range has {groups:?} work-groups per dimension, more than {max} in all", max = MAX_GROUPS)]
    TooManyGroups {
        /// Work-groups in each dimension.
        groups: Vec<usize>,
    },
    /// The sub-group size is outside 1..=[`MAX_SUB_GROUP_SIZE`].
    #[error("sub-group size {size} is outside 1..={max}", max = MAX_SUB_GROUP_SIZE)]
    SubGroupSize {
        /// The size asked for.
        size: usize,
    },
}

/// A validated ND-range with its local size resolved. Dimensions beyond
/// [`Geometry::dims`] have global and local size 1 and offset 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub(crate) dims: usize,
    pub(crate) global: [usize; 3],
    pub(crate) offset: [usize; 3],
    pub(crate) local: [usize; 3],
    pub(crate) num_groups: [usize; 3],
    pub(crate) sub_group_size: usize,
}

impl Geometry {
    /// Number of dimensions in use, 1 to 3 (`get_work_dim`).
    pub fn dims(&self) -> usize {
        self.dims
    }
    /// The global size in each dimension.
    pub fn global(&self) -> [usize; 3] {
        self.global
    }
    /// The global offset in each dimension.
    pub fn offset(&self) -> [usize; 3] {
        self.offset
    }
    /// The enqueued local size in each dimension (full groups).
    pub fn enqueued_local(&self) -> [usize; 3] {
        self.local
    }
    /// Number of work-groups in each dimension.
    pub fn num_groups(&self) -> [usize; 3] {
        self.num_groups
    }
    /// The launch's sub-group size.
    pub fn sub_group_size(&self) -> usize {
        self.sub_group_size
    }
    /// Total number of work-groups.
    pub fn group_count(&self) -> usize {
        self.num_groups.iter().product()
    }

    /// `v[dim]` for a dimension in use, else `default`: what OpenCL C's
    /// work-item functions return for a dimension beyond `get_work_dim()`
    /// (1 for sizes, 0 for ids and offsets).
    ///
    /// Every `v` passed here (sizes, ids, offsets of this geometry) holds
    /// that default already in the dimensions past `dims` (see the type's
    /// docs: size 1, offset 0, so ids 0 and one group), so only a `dim` of 3
    /// or more needs the test, and `dims` is not read: in a loop over
    /// work-items, reading it through the geometry's pointer per call cost
    /// a load chain per work-item.
    #[inline]
    pub(crate) fn in_dim(&self, dim: u32, v: [usize; 3], default: usize) -> usize {
        debug_assert!(
            (self.dims..3).all(|d| v[d] == default),
            "{v:?} is not {default} past dimension {}",
            self.dims
        );
        match v.get(dim as usize) {
            Some(&x) => x,
            None => default,
        }
    }
    /// Total number of work-items.
    pub fn item_count(&self) -> usize {
        self.global.iter().product()
    }
    /// Work-items in a full (enqueued) work-group.
    pub fn enqueued_group_len(&self) -> usize {
        self.local.iter().product()
    }
    /// The group id of the group with this linear index (dimension 0 fastest).
    #[inline]
    pub fn group_id(&self, linear: usize) -> [usize; 3] {
        let n = self.num_groups;
        // Without a division where the range allows: a division costs about
        // as much as the rest of starting a group.
        if n[1] == 1 && n[2] == 1 {
            return [linear, 0, 0];
        }
        if n[2] == 1 {
            return [linear % n[0], linear / n[0], 0];
        }
        [
            linear % n[0],
            (linear / n[0]) % n[1],
            linear / (n[0] * n[1]),
        ]
    }
    /// The actual local size of the group with this id: smaller than the
    /// enqueued size for the last group of a non-uniform dimension, and 0
    /// for a group outside the range.
    #[inline]
    pub fn local_size_of(&self, group: [usize; 3]) -> [usize; 3] {
        let mut out = [1; 3];
        for d in 0..3 {
            out[d] = self.global[d]
                .saturating_sub(group[d] * self.local[d])
                .min(self.local[d]);
        }
        out
    }
    /// `get_max_sub_group_size`: the largest sub-group of the dispatch.
    pub fn max_sub_group_size(&self) -> usize {
        self.sub_group_size.min(self.enqueued_group_len())
    }
    /// `get_enqueued_num_sub_groups`: sub-groups in a full work-group.
    pub fn enqueued_num_sub_groups(&self) -> usize {
        self.enqueued_group_len().div_ceil(self.sub_group_size)
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.dims;
        write!(
            f,
            "global {:?} local {:?} offset {:?} sub-group {}",
            &self.global[..d],
            &self.local[..d],
            &self.offset[..d],
            self.sub_group_size
        )
    }
}
