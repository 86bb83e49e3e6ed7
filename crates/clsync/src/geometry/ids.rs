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

/// The ids of every work-item of one group, in local linear order,
/// computed by counting rather than dividing.
pub(crate) struct GroupItems<'a> {
    geo: &'a Geometry,
    next: ItemIds,
    remaining: usize,
}

impl<'a> GroupItems<'a> {
    pub(crate) fn new(geo: &'a Geometry, group_id: [usize; 3], local_size: [usize; 3]) -> Self {
        let remaining = local_size.iter().product();
        GroupItems {
            geo,
            next: ItemIds::new(geo, group_id, local_size, 0),
            remaining,
        }
    }
}

impl Iterator for GroupItems<'_> {
    type Item = ItemIds;

    fn next(&mut self) -> Option<ItemIds> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let out = self.next;
        let n = &mut self.next;
        let g = self.geo.global;
        n.local_linear_id += 1;
        n.sub_group_local_id += 1;
        if n.sub_group_local_id == self.geo.sub_group_size {
            n.sub_group_local_id = 0;
            n.sub_group_id += 1;
            let group_len: usize = n.local_size.iter().product();
            n.sub_group_size =
                (group_len - n.sub_group_id * self.geo.sub_group_size).min(self.geo.sub_group_size);
        }
        // Odometer over local ids, dimension 0 fastest.
        for d in 0..3 {
            n.local_id[d] += 1;
            n.global_id[d] += 1;
            if n.local_id[d] < n.local_size[d] {
                break;
            }
            n.global_id[d] -= n.local_id[d];
            n.local_id[d] = 0;
        }
        n.global_linear_id = (n.global_id[2] - self.geo.offset[2]) * g[1] * g[0]
            + (n.global_id[1] - self.geo.offset[1]) * g[0]
            + (n.global_id[0] - self.geo.offset[0]);
        Some(out)
    }
}

/// The size of sub-group `id` of a group of `group_len` work-items cut into
/// sub-groups of `sg`: `sg`, except the last, which may be partial.
#[inline]
pub(crate) fn sub_group_len(group_len: usize, sg: usize, id: usize) -> usize {
    (group_len - id * sg).min(sg)
}
