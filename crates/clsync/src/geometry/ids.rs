//! One work-item's ids, precomputed so every work-item function is a field
//! read.

use super::Geometry;

/// Where one work-item sits in the ND-range. Each field answers one OpenCL C
/// work-item function for the dimensions in use; the accessors on
/// [`WorkItem`](crate::WorkItem) add the out-of-range defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ItemIds {
    /// `get_global_id` (includes the global offset).
    pub global_id: [usize; 3],
    /// `get_local_id`.
    pub local_id: [usize; 3],
    /// `get_group_id`.
    pub group_id: [usize; 3],
    /// `get_local_size`: this group's actual size.
    pub local_size: [usize; 3],
    /// `get_local_linear_id`.
    pub local_linear_id: usize,
    /// `get_global_linear_id`.
    pub global_linear_id: usize,
    /// `get_sub_group_id`.
    pub sub_group_id: usize,
    /// `get_sub_group_local_id`.
    pub sub_group_local_id: usize,
    /// `get_sub_group_size`: this sub-group's size (the last one of a group
    /// may be partial).
    pub sub_group_size: usize,
    /// `get_num_sub_groups`: sub-groups in this group.
    pub num_sub_groups: usize,
}

impl ItemIds {
    /// The ids of the work-item with local linear id `local_linear` in the
    /// group `group_id`, whose actual size is `local_size`.
    pub fn new(
        geo: &Geometry,
        group_id: [usize; 3],
        local_size: [usize; 3],
        local_linear: usize,
    ) -> Self {
        let local_id = [
            local_linear % local_size[0],
            (local_linear / local_size[0]) % local_size[1],
            local_linear / (local_size[0] * local_size[1]),
        ];
        let mut global_id = [0; 3];
        for d in 0..3 {
            global_id[d] = group_id[d] * geo.local[d] + local_id[d] + geo.offset[d];
        }
        // OpenCL C 2.0 §6.13.1: get_global_linear_id is computed from the ids
        // with the offset removed, over the global sizes.
        let g = geo.global;
        let global_linear_id = (global_id[2] - geo.offset[2]) * g[1] * g[0]
            + (global_id[1] - geo.offset[1]) * g[0]
            + (global_id[0] - geo.offset[0]);
        let group_len: usize = local_size.iter().product();
        let sg = geo.sub_group_size;
        let sub_group_id = local_linear / sg;
        let num_sub_groups = group_len.div_ceil(sg);
        let sub_group_size = sub_group_len(group_len, sg, sub_group_id);
        ItemIds {
            global_id,
            local_id,
            group_id,
            local_size,
            local_linear_id: local_linear,
            global_linear_id,
            sub_group_id,
            sub_group_local_id: local_linear % sg,
            sub_group_size,
            num_sub_groups,
        }
    }
}

/// The work-item ids of one group at a time, kept by a worker and refilled
/// group after group of one launch ([`GroupIds::fill`]).
#[derive(Debug, Default)]
pub(crate) struct GroupIds {
    items: Vec<ItemIds>,
    /// The geometry `items` were filled for (their local size is theirs).
    geometry: Option<Geometry>,
}

impl GroupIds {
    /// The ids of every work-item of the group `group_id` of `geo` (of
    /// actual size `local_size`), in local linear order.
    ///
    /// A group of the same geometry and size as the last one filled differs
    /// from it only in its group id, global ids and global linear ids, each
    /// by the same amount for every work-item, so those alone are moved (a
    /// store and three additions per work-item, about 15 instructions
    /// against 45). Anything else is filled afresh by nested loops over the
    /// local ids ([`fill_group`]). The `group_ids_match_item_ids_new` test
    /// holds both to [`ItemIds::new`], which counts nothing.
    pub(crate) fn fill(
        &mut self,
        geo: &Geometry,
        group_id: [usize; 3],
        local_size: [usize; 3],
    ) -> &[ItemIds] {
        let same_launch = self.geometry.as_ref() == Some(geo);
        match self.items.first() {
            Some(first) if same_launch && first.local_size == local_size => {
                let old = first.group_id;
                if old != group_id {
                    shift_group(geo, old, group_id, &mut self.items);
                }
            }
            _ => {
                fill_group(geo, group_id, local_size, &mut self.items);
                if !same_launch {
                    self.geometry = Some(geo.clone());
                }
            }
        }
        &self.items
    }

    /// The ids of the group last filled.
    #[cfg(test)]
    fn as_slice(&self) -> &[ItemIds] {
        &self.items
    }
}

/// Moves `items`, the ids of group `from`, to those of group `to` of the
/// same geometry and size: each global id by the distance between the two
/// groups' first work-items, each global linear id by that distance's linear
/// value, and the group id. Wrapping sums: a distance may be negative per
/// dimension, and the results are the in-range values the full fill gives.
fn shift_group(geo: &Geometry, from: [usize; 3], to: [usize; 3], items: &mut [ItemIds]) {
    let step: [usize; 3] =
        std::array::from_fn(|d| (to[d] * geo.local[d]).wrapping_sub(from[d] * geo.local[d]));
    let g = geo.global;
    let linear_step = step[2]
        .wrapping_mul(g[1] * g[0])
        .wrapping_add(step[1].wrapping_mul(g[0]))
        .wrapping_add(step[0]);
    for ids in items {
        ids.group_id = to;
        for (id, step) in ids.global_id.iter_mut().zip(step) {
            *id = id.wrapping_add(step);
        }
        ids.global_linear_id = ids.global_linear_id.wrapping_add(linear_step);
    }
}

/// Fills `out` with the ids of every work-item of the group `group_id`
/// (of actual size `local_size`), in local linear order, replacing what it
/// held; its allocation is kept.
///
/// Nested loops over the local ids, each item built where it belongs from
/// values the loops keep. Collected from an iterator (counters and one
/// odometer step per item) the same filling took about 86 instructions per
/// work-item.
fn fill_group(
    geo: &Geometry,
    group_id: [usize; 3],
    local_size: [usize; 3],
    out: &mut Vec<ItemIds>,
) {
    let n: usize = local_size.iter().product();
    out.clear();
    out.reserve(n);
    let (g, sg) = (geo.global, geo.sub_group_size);
    let num_sub_groups = n.div_ceil(sg);
    // The group's first work-item's global id without the offset, which
    // the global linear id is computed from (OpenCL C 2.0 §6.13.1).
    let first: [usize; 3] = std::array::from_fn(|d| group_id[d] * geo.local[d]);
    let (mut linear, mut sub_group_id, mut sub_group_local_id) = (0, 0, 0);
    let mut sub_group_size = sub_group_len(n, sg, 0);
    for z in 0..local_size[2] {
        for y in 0..local_size[1] {
            let row = (first[2] + z) * g[1] * g[0] + (first[1] + y) * g[0] + first[0];
            let (gy, gz) = (first[1] + y + geo.offset[1], first[2] + z + geo.offset[2]);
            for x in 0..local_size[0] {
                out.push(ItemIds {
                    global_id: [first[0] + x + geo.offset[0], gy, gz],
                    local_id: [x, y, z],
                    group_id,
                    local_size,
                    local_linear_id: linear,
                    global_linear_id: row + x,
                    sub_group_id,
                    sub_group_local_id,
                    sub_group_size,
                    num_sub_groups,
                });
                linear += 1;
                sub_group_local_id += 1;
                if sub_group_local_id == sg {
                    // The next sub-group; past the last only after the last
                    // item, when `sub_group_id * sg == n`.
                    sub_group_local_id = 0;
                    sub_group_id += 1;
                    sub_group_size = sub_group_len(n, sg, sub_group_id);
                }
            }
        }
    }
}

/// The size of sub-group `id` of a group of `group_len` work-items cut into
/// sub-groups of `sg`: `sg`, except the last, which may be partial.
#[inline]
pub(crate) fn sub_group_len(group_len: usize, sg: usize, id: usize) -> usize {
    (group_len - id * sg).min(sg)
}

#[cfg(test)]
mod tests {
    use super::{GroupIds, ItemIds};
    use crate::NdRange;

    /// Over ranges of one to three dimensions, with offsets, partial groups
    /// and sub-group sizes that do and do not divide the group, a group's
    /// ids agree with [`ItemIds::new`] item by item: filled afresh, moved
    /// from the group before (in order, and in reverse, so that a move goes
    /// back as well as forward in each dimension), and after a group of
    /// another size or another launch's geometry.
    #[test]
    fn group_ids_match_item_ids_new() {
        let ranges = [
            NdRange::new([37]).local([8]).offset([5]).sub_group_size(3),
            NdRange::new([12, 7])
                .local([4, 3])
                .offset([2, 9])
                .sub_group_size(5),
            NdRange::new([6, 5, 9])
                .local([2, 3, 4])
                .offset([1, 0, 7])
                .sub_group_size(8),
            NdRange::new([64, 4, 2])
                .local([16, 2, 2])
                .sub_group_size(16),
            // The same local size as the one before, another global size
            // and offset: a new launch, filled afresh.
            NdRange::new([32, 6, 4])
                .local([16, 2, 2])
                .offset([3, 1, 2])
                .sub_group_size(16),
        ];
        let mut kept = GroupIds::default();
        for range in ranges {
            let geo = range.resolve().expect("a valid range");
            let n = geo.num_groups;
            let mut groups = Vec::new();
            for gz in 0..n[2] {
                for gy in 0..n[1] {
                    for gx in 0..n[0] {
                        groups.push([gx, gy, gz]);
                    }
                }
            }
            let reversed: Vec<_> = groups.iter().rev().copied().collect();
            for group_id in groups.into_iter().chain(reversed) {
                let local_size = geo.local_size_of(group_id);
                let want: Vec<ItemIds> = (0..local_size.iter().product())
                    .map(|l| ItemIds::new(&geo, group_id, local_size, l))
                    .collect();
                let got = kept.fill(&geo, group_id, local_size);
                assert_eq!(got, &want[..], "{range:?} group {group_id:?}");
                assert_eq!(kept.as_slice(), &want[..]);
            }
        }
    }
}
