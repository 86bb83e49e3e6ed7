//! Property tests: over random ND-ranges (1–3 dimensions, uniform and
//! non-uniform, with offsets and random sub-group sizes), every work-item
//! function agrees with a reference computed on the host from the OpenCL C
//! 2.0 definitions (§6.13.1 and the sub-group functions), and every
//! work-item runs exactly once.

mod common;

use clsync::*;
use proptest::prelude::*;

/// The values a work-item reports, in a fixed order.
const FIELDS: usize = 26;

fn record(wi: &WorkItem) -> [usize; FIELDS] {
    let d = |f: &dyn Fn(u32) -> usize| [f(0), f(1), f(2)];
    let g = d(&|i| wi.get_global_id(i));
    let l = d(&|i| wi.get_local_id(i));
    let grp = d(&|i| wi.get_group_id(i));
    let ls = d(&|i| wi.get_local_size(i));
    let els = d(&|i| wi.get_enqueued_local_size(i));
    let gs = d(&|i| wi.get_global_size(i));
    let off = d(&|i| wi.get_global_offset(i));
    [
        wi.get_work_dim() as usize,
        g[0],
        g[1],
        g[2],
        l[0],
        l[1],
        l[2],
        grp[0],
        grp[1],
        grp[2],
        ls[0] * 1_000_000 + ls[1] * 1000 + ls[2],
        els[0] * 1_000_000 + els[1] * 1000 + els[2],
        gs[0] * 1_000_000 + gs[1] * 1000 + gs[2],
        off[0] * 1_000_000 + off[1] * 1000 + off[2],
        wi.get_num_groups(0) * 1_000_000 + wi.get_num_groups(1) * 1000 + wi.get_num_groups(2),
        wi.get_global_linear_id(),
        wi.get_local_linear_id(),
        wi.get_sub_group_size() as usize,
        wi.get_max_sub_group_size() as usize,
        wi.get_num_sub_groups() as usize,
        wi.get_enqueued_num_sub_groups() as usize,
        wi.get_sub_group_id() as usize,
        wi.get_sub_group_local_id() as usize,
        // Out-of-range dimensions: 1 for sizes, 0 for ids.
        wi.get_global_size(3) * 10 + wi.get_global_id(7),
        wi.get_local_size(5) * 10 + wi.get_local_id(3),
        wi.get_num_groups(9) * 10 + wi.get_group_id(4) + wi.get_global_offset(3),
    ]
}

/// The reference, straight from the definitions, for the work-item with
/// this global id.
fn expected(
    dims: usize,
    global: [usize; 3],
    local: [usize; 3],
    offset: [usize; 3],
    sg: usize,
    id: [usize; 3],
) -> [usize; FIELDS] {
    let pack = |v: [usize; 3]| v[0] * 1_000_000 + v[1] * 1000 + v[2];
    let mut group = [0; 3];
    let mut lid = [0; 3];
    let mut ls = [1; 3];
    let mut groups = [1; 3];
    for d in 0..3 {
        let rel = id[d] - offset[d];
        group[d] = rel / local[d];
        lid[d] = rel % local[d];
        groups[d] = global[d].div_ceil(local[d]);
        // The last group of a non-uniform dimension holds the remainder.
        ls[d] = if group[d] == groups[d] - 1 && global[d] % local[d] != 0 {
            global[d] % local[d]
        } else {
            local[d]
        };
    }
    let glin = (id[2] - offset[2]) * global[1] * global[0]
        + (id[1] - offset[1]) * global[0]
        + (id[0] - offset[0]);
    let llin = lid[2] * ls[1] * ls[0] + lid[1] * ls[0] + lid[0];
    let group_len = ls[0] * ls[1] * ls[2];
    let enq_len = local[0] * local[1] * local[2];
    let sgid = llin / sg;
    let sgsize = if (sgid + 1) * sg <= group_len {
        sg
    } else {
        group_len - sgid * sg
    };
    [
        dims,
        id[0],
        id[1],
        id[2],
        lid[0],
        lid[1],
        lid[2],
        group[0],
        group[1],
        group[2],
        pack(ls),
        pack(local),
        pack(global),
        pack(offset),
        pack(groups),
        glin,
        llin,
        sgsize,
        sg.min(enq_len),
        group_len.div_ceil(sg),
        enq_len.div_ceil(sg),
        sgid,
        llin % sg,
        10,
        10,
        10,
    ]
}

fn arb_range() -> impl Strategy<Value = (usize, [usize; 3], [usize; 3], [usize; 3], usize, bool)> {
    (1usize..=3).prop_flat_map(|dims| {
        let size = prop::array::uniform3(1usize..=9);
        (
            Just(dims),
            size.clone(),
            size,
            prop::array::uniform3(0usize..=5),
            1usize..=64,
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_work_item_function_matches_the_definition((dims, g, l, o, sg, uniform) in arb_range()) {
        let mut global = [1; 3];
        let mut local = [1; 3];
        let mut offset = [0; 3];
        for d in 0..dims {
            // A uniform range gets a global size that is a multiple.
            global[d] = if uniform { g[d] * l[d] } else { g[d] + l[d] };
            local[d] = l[d];
            offset[d] = o[d];
        }
        let range = match dims {
            1 => NdRange::new([global[0]]).local([local[0]]).offset([offset[0]]),
            2 => NdRange::new([global[0], global[1]]).local([local[0], local[1]]).offset([offset[0], offset[1]]),
            _ => NdRange::new(global).local(local).offset(offset),
        }
        .sub_group_size(sg)
        .uniform_work_groups(uniform);
        let n: usize = global.iter().product();
        let out = Buffer::<usize>::new(n * FIELDS);
        let hits = Buffer::<AtomicSize>::new(n);
        common::rt().launch(&Launch::new("ids", range), |wi| {
            let lin = wi.get_global_linear_id();
            hits.at(lin).fetch_add(1);
            for (i, v) in record(wi).into_iter().enumerate() {
                out.set(lin * FIELDS + i, v);
            }
        }).unwrap();
        let out = out.to_vec();
        prop_assert!(hits.to_vec().iter().all(|&h| h == 1), "every work-item runs exactly once");
        for z in 0..global[2] {
            for y in 0..global[1] {
                for x in 0..global[0] {
                    let lin = z * global[1] * global[0] + y * global[0] + x;
                    let id = [x + offset[0], y + offset[1], z + offset[2]];
                    let want = expected(dims, global, local, offset, sg, id);
                    prop_assert_eq!(&out[lin * FIELDS..(lin + 1) * FIELDS], &want[..], "work-item {:?}", id);
                }
            }
        }
    }
}
