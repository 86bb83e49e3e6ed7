//! Kernels with tricky but valid synchronization: the checker must report
//! nothing. Each also checks its result against a sequential computation,
//! so a kernel that "passes" by not running cannot pass.

mod common;

use std::hint::spin_loop;

use clsync::sync::{
    AcqRel, Acquire, DeviceScope, Relaxed, Release, SubGroupScope, WorkGroupScope, WorkItemScope,
    GLOBAL, IMAGE, LOCAL,
};
use clsync::{AtomicFlag, AtomicInt, AtomicUint, Buffer, Image2d, Launch, NdRange};
use common::check::{check, expect_none};

#[test]
fn tile_reverse_through_local_memory() {
    let data = Buffer::from_slice(&(0..128u32).collect::<Vec<_>>());
    let out = Buffer::<u32>::new(128);
    let mut launch = Launch::new("reverse", NdRange::new([128]).local([32]));
    let tile = launch.local::<u32>(32);
    let out = std::sync::Arc::new(out);
    let o = out.clone();
    let r = check(launch, move |wi| {
        let (l, g) = (wi.get_local_id(0), wi.get_global_id(0));
        let t = wi.local(tile);
        t.set(l, data.get(g));
        wi.barrier(LOCAL);
        o.set(g, t.get(31 - l));
    });
    expect_none(&r);
    assert_eq!(out.get(0), 31);
    assert_eq!(out.get(127), 96);
}

#[test]
fn tree_reduction_with_a_barrier_per_level() {
    let input = Buffer::from_slice(&(1..=512u32).collect::<Vec<_>>());
    let out = std::sync::Arc::new(Buffer::<u32>::new(4));
    let o = out.clone();
    let mut launch = Launch::new("reduce", NdRange::new([512]).local([128]));
    let scratch = launch.local::<u32>(128);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let s = wi.local(scratch);
        s.set(l, input.get(wi.get_global_id(0)));
        let mut half = 64;
        while half > 0 {
            wi.barrier(LOCAL);
            if l < half {
                s.set(l, s.get(l) + s.get(l + half));
            }
            half /= 2;
        }
        if l == 0 {
            o.set(wi.get_group_id(0), s.get(0));
        }
    });
    expect_none(&r);
    let want: Vec<u32> = (0..4)
        .map(|g| (g * 128 + 1..=g * 128 + 128).sum())
        .collect();
    assert_eq!(out.to_vec(), want);
}

#[test]
fn global_exchange_with_a_global_barrier() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(64));
    let d = data.clone();
    let launch = Launch::new("gx", NdRange::new([64]).local([64]));
    let r = check(launch, move |wi| {
        let g = wi.get_global_id(0);
        d.set(g, g as u32);
        wi.barrier(GLOBAL);
        let v = d.get(63 - g);
        wi.barrier(GLOBAL);
        d.set(g, v);
    });
    expect_none(&r);
    assert_eq!(data.get(0), 63);
}

#[test]
fn one_barrier_for_both_spaces() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(16));
    let d = data.clone();
    let mut launch = Launch::new("both", NdRange::new([16]).local([16]));
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 2 * l as u32);
        d.set(l, l as u32);
        wi.barrier(LOCAL | GLOBAL);
        let v = t.get(15 - l) + d.get(15 - l);
        wi.barrier(LOCAL | GLOBAL);
        d.set(l, v);
    });
    expect_none(&r);
    assert_eq!(data.get(0), 45);
}

#[test]
fn sub_group_exchange_stays_in_the_sub_group() {
    let out = std::sync::Arc::new(Buffer::<u32>::new(32));
    let o = out.clone();
    let mut launch = Launch::new("sg_rev", NdRange::new([32]).local([32]).sub_group_size(8));
    let tile = launch.local::<u32>(32);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let (sg, sl) = (
            wi.get_sub_group_id() as usize,
            wi.get_sub_group_local_id() as usize,
        );
        let t = wi.local(tile);
        t.set(l, l as u32);
        wi.sub_group_barrier(LOCAL);
        o.set(l, t.get(sg * 8 + 7 - sl));
    });
    expect_none(&r);
    assert_eq!(out.get(0), 7);
    assert_eq!(out.get(31), 24);
}

#[test]
fn work_group_barrier_at_sub_group_scope_within_the_sub_group() {
    let out = std::sync::Arc::new(Buffer::<u32>::new(16));
    let o = out.clone();
    let mut launch = Launch::new("sg_scope", NdRange::new([16]).local([16]).sub_group_size(4));
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, l as u32);
        wi.work_group_barrier_scope(LOCAL, SubGroupScope);
        o.set(l, t.get(l ^ 1));
    });
    expect_none(&r);
    assert_eq!(out.get(0), 1);
}

fn two_groups(name: &str) -> Launch {
    Launch::new(name, NdRange::new([2]).local([1]))
}

#[test]
fn message_passing_release_acquire_between_groups() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(2));
    let d = data.clone();
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_ra"), move |wi| {
        if wi.get_group_id(0) == 0 {
            d.set(0, 42);
            flag.at(0).store_explicit(1, Release);
        } else {
            while flag.at(0).load_explicit(Acquire) == 0 {
                spin_loop();
            }
            d.set(1, d.get(0) + 1);
        }
    });
    expect_none(&r);
    assert_eq!(data.to_vec(), vec![42, 43]);
}

/// A whole group's writes reach another group through a barrier and one
/// work-item's release: the release publishes what the barrier ordered
/// before it (the group up to the barrier, which the work-items' own clocks
/// leave to their barrier counts).
#[test]
fn group_writes_published_after_a_barrier_by_one_release() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(4));
    let d = data.clone();
    let sum = std::sync::Arc::new(Buffer::<u32>::new(1));
    let s = sum.clone();
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let launch = Launch::new("publish", NdRange::new([8]).local([4]));
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        if wi.get_group_id(0) == 0 {
            d.set(l, l as u32 + 1);
            wi.barrier(GLOBAL);
            if l == 0 {
                flag.at(0).store_explicit(1, Release);
            }
        } else {
            wi.barrier(GLOBAL);
            if l == 0 {
                while flag.at(0).load_explicit(Acquire) == 0 {
                    spin_loop();
                }
                s.set(0, (0..4).map(|i| d.get(i)).sum());
            }
        }
    });
    expect_none(&r);
    assert_eq!(sum.get(0), 10);
}

/// What one work-item acquired reaches the others of its group through a
/// global barrier, even after a local barrier came between: a local
/// barrier joins the clocks of local memory only, and leaves the global
/// ones to be joined by the next barrier that fences global memory
/// (`003_2caebc1f01141481.txt`). The work-item acquires by an acquire
/// load, or by a relaxed load and an acquire fence
/// (`000_96da91f170ff246f.txt`).
#[test]
fn an_acquire_reaches_the_group_through_a_later_global_barrier() {
    for fenced in [false, true] {
        let data = std::sync::Arc::new(Buffer::<u32>::new(2));
        let d = data.clone();
        let flag: Buffer<AtomicInt> = Buffer::new(1);
        let launch = Launch::new("acquire_then_barriers", NdRange::new([4]).local([2]));
        let r = check(launch, move |wi| {
            let l = wi.get_local_id(0);
            if wi.get_group_id(0) == 0 {
                if l == 0 {
                    d.set(0, 42);
                    flag.at(0).store_explicit(1, Release);
                }
            } else {
                if l == 0 {
                    if fenced {
                        while flag.at(0).load_explicit(Relaxed) == 0 {
                            spin_loop();
                        }
                        wi.atomic_work_item_fence(GLOBAL, Acquire, DeviceScope);
                    } else {
                        while flag.at(0).load_explicit(Acquire) == 0 {
                            spin_loop();
                        }
                    }
                }
                wi.barrier(LOCAL);
                wi.barrier(GLOBAL);
                if l == 1 {
                    d.set(1, d.get(0) + 1);
                }
            }
        });
        expect_none(&r);
        assert_eq!(data.to_vec(), vec![42, 43], "fenced: {fenced}");
    }
}

#[test]
fn message_passing_with_fences_and_relaxed_atomics() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(2));
    let d = data.clone();
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_fences"), move |wi| {
        if wi.get_group_id(0) == 0 {
            d.set(0, 42);
            wi.atomic_work_item_fence(GLOBAL, Release, DeviceScope);
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            wi.atomic_work_item_fence(GLOBAL, Acquire, DeviceScope);
            d.set(1, d.get(0) + 1);
        }
    });
    expect_none(&r);
    assert_eq!(data.get(1), 43);
}

#[test]
fn release_store_with_acquire_fence_after_relaxed_spin() {
    let data = std::sync::Arc::new(Buffer::<u32>::new(2));
    let d = data.clone();
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_mixed_forms"), move |wi| {
        if wi.get_group_id(0) == 0 {
            d.set(0, 5);
            flag.at(0).store_explicit_scope(1, Release, DeviceScope);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            wi.atomic_work_item_fence(GLOBAL | LOCAL, AcqRel, DeviceScope);
            d.set(1, d.get(0) * 2);
        }
    });
    expect_none(&r);
    assert_eq!(data.get(1), 10);
}

#[test]
fn release_sequence_through_a_relaxed_rmw() {
    // Group 0 publishes with a release store; group 1 bumps the flag with a
    // relaxed read-modify-write (continuing the release sequence); group 2
    // acquires the bumped value and may read group 0's data.
    let data = std::sync::Arc::new(Buffer::<u32>::new(2));
    let d = data.clone();
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let launch = Launch::new("release_sequence", NdRange::new([3]).local([1]));
    let rt = clsync::Runtime::with_threads(3);
    let r = common::within(60, move || {
        rt.check(&launch, move |wi| match wi.get_group_id(0) {
            0 => {
                d.set(0, 9);
                flag.at(0).store_explicit(1, Release);
            }
            1 => {
                while flag.at(0).load_explicit(Relaxed) == 0 {
                    spin_loop();
                }
                flag.at(0).fetch_add_explicit(1, Relaxed);
            }
            _ => {
                while flag.at(0).load_explicit(Acquire) != 2 {
                    spin_loop();
                }
                d.set(1, d.get(0) + 1);
            }
        })
        .unwrap()
    });
    expect_none(&r);
    assert_eq!(data.get(1), 10);
}

#[test]
fn spin_lock_with_an_atomic_flag() {
    let counter = std::sync::Arc::new(Buffer::<u32>::new(1));
    let c = counter.clone();
    let lock: Buffer<AtomicFlag> = Buffer::new(1);
    let launch = Launch::new("spinlock", NdRange::new([4]).local([1]));
    let r = check(launch, move |_wi| {
        while lock.at(0).test_and_set_explicit(Acquire) {
            spin_loop();
        }
        c.set(0, c.get(0) + 1);
        lock.at(0).clear_explicit(Release);
    });
    expect_none(&r);
    assert_eq!(counter.get(0), 4);
}

#[test]
fn local_histogram_with_work_group_atomics() {
    let bytes: Vec<u32> = (0..1024u32).map(|i| (i * 7 + 3) % 16).collect();
    let input = Buffer::from_slice(&bytes);
    let hist: std::sync::Arc<Buffer<AtomicUint>> = std::sync::Arc::new(Buffer::new(16));
    let h = hist.clone();
    let mut launch = Launch::new("histogram", NdRange::new([256]).local([64]));
    let bins = launch.local::<AtomicUint>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let b = wi.local(bins);
        if l < 16 {
            b.at(l).store_explicit_scope(0, Relaxed, WorkGroupScope);
        }
        wi.barrier(LOCAL);
        for k in 0..4 {
            let v = input.get(wi.get_global_id(0) * 4 + k) as usize;
            b.at(v).fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
        }
        wi.barrier(LOCAL);
        if l < 16 {
            let n = b.at(l).load_explicit_scope(Relaxed, WorkGroupScope);
            h.at(l).fetch_add_explicit(n, Relaxed);
        }
    });
    expect_none(&r);
    let mut want = [0u32; 16];
    for b in bytes {
        want[b as usize] += 1;
    }
    assert_eq!(hist.to_vec(), want.to_vec());
}

#[test]
fn last_group_reduces_the_partial_sums() {
    // The "threadfence reduction": each group publishes a partial sum with a
    // release fence and takes a ticket; the group with the last ticket
    // acquires and adds the partials.
    let partial = Buffer::<u32>::new(8);
    let ticket: Buffer<AtomicUint> = Buffer::new(1);
    let total = std::sync::Arc::new(Buffer::<u32>::new(1));
    let t = total.clone();
    let launch = Launch::new("last_block", NdRange::new([8]).local([1]));
    let r = check(launch, move |wi| {
        let g = wi.get_group_id(0);
        partial.set(g, g as u32 * 10);
        wi.atomic_work_item_fence(GLOBAL, Release, DeviceScope);
        if ticket.at(0).fetch_add_explicit(1, Relaxed) == 7 {
            wi.atomic_work_item_fence(GLOBAL, Acquire, DeviceScope);
            t.set(0, (0..8).map(|i| partial.get(i)).sum());
        }
    });
    expect_none(&r);
    assert_eq!(total.get(0), 280);
}

#[test]
fn every_work_item_its_own_element() {
    let out = std::sync::Arc::new(Buffer::<u64>::new(1000));
    let o = out.clone();
    let r = check(Launch::new("iota", NdRange::new([1000])), move |wi| {
        let g = wi.get_global_id(0);
        o.set(g, (g * g) as u64);
    });
    expect_none(&r);
    assert_eq!(out.get(999), 998001);
}

#[test]
fn double_buffered_stencil() {
    let out = std::sync::Arc::new(Buffer::<u32>::new(32));
    let o = out.clone();
    let mut launch = Launch::new("stencil", NdRange::new([32]).local([32]));
    let a = launch.local::<u32>(32);
    let b = launch.local::<u32>(32);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let (mut src, mut dst) = (wi.local(a), wi.local(b));
        src.set(l, l as u32);
        for _ in 0..4 {
            wi.barrier(LOCAL);
            let left = if l == 0 { 0 } else { src.get(l - 1) };
            dst.set(l, left + src.get(l));
            std::mem::swap(&mut src, &mut dst);
        }
        wi.barrier(LOCAL);
        o.set(l, src.get(l));
    });
    expect_none(&r);
    // Four rounds of x[i] += x[i-1] over 0..32: binomial sums.
    let mut x: Vec<u32> = (0..32).collect();
    for _ in 0..4 {
        x = (0..32)
            .map(|i| x[i] + if i == 0 { 0 } else { x[i - 1] })
            .collect();
    }
    assert_eq!(out.to_vec(), x);
}

#[test]
fn image_write_fence_read_own_pixel() {
    let img = std::sync::Arc::new(Image2d::<[u32; 4]>::new(8, 8));
    let i2 = img.clone();
    let launch = Launch::new("img_own", NdRange::new([8, 8]).local([8, 8]));
    let r = check(launch, move |wi| {
        let c = [wi.get_global_id(0) as i32, wi.get_global_id(1) as i32];
        i2.write(wi, c, [c[0] as u32; 4]);
        wi.atomic_work_item_fence(IMAGE, AcqRel, WorkItemScope);
        let p = i2.read(wi, c);
        i2.write(wi, c, [p[0] + 1; 4]);
    });
    expect_none(&r);
    assert_eq!(img.get([5, 2]), [6; 4]);
}

#[test]
fn image_fence_combined_with_the_global_flag_still_fences_images() {
    // `000_96da91f170ff246f.txt`: IMAGE ORed with GLOBAL is the image fence
    // and the global fence, one after the other.
    let img = std::sync::Arc::new(Image2d::<[u32; 4]>::new(4, 1));
    let i2 = img.clone();
    let launch = Launch::new("img_and_global", NdRange::new([4]).local([4]));
    let r = check(launch, move |wi| {
        let c = [wi.get_global_id(0) as i32, 0];
        i2.write(wi, c, [9; 4]);
        wi.atomic_work_item_fence(IMAGE | GLOBAL, AcqRel, WorkGroupScope);
        let p = i2.read(wi, c);
        i2.write(wi, c, [p[0] + 1; 4]);
    });
    expect_none(&r);
    assert_eq!(img.get([3, 0]), [10; 4]);
}

#[test]
fn image_barrier_then_neighbour_pixel() {
    let img = std::sync::Arc::new(Image2d::<[f32; 4]>::new(16, 1));
    let out = std::sync::Arc::new(Buffer::<f32>::new(16));
    let (i2, o) = (img.clone(), out.clone());
    let launch = Launch::new("img_neighbour", NdRange::new([16]).local([16]));
    let r = check(launch, move |wi| {
        let x = wi.get_global_id(0) as i32;
        i2.write(wi, [x, 0], [x as f32; 4]);
        wi.barrier(IMAGE);
        o.set(x as usize, i2.read(wi, [(x + 1) % 16, 0])[0]);
    });
    expect_none(&r);
    assert_eq!(out.get(15), 0.0);
    assert_eq!(out.get(3), 4.0);
}

#[test]
fn message_passing_within_a_group_through_local_atomics() {
    let out = std::sync::Arc::new(Buffer::<u32>::new(8));
    let o = out.clone();
    let mut launch = Launch::new("local_mp", NdRange::new([8]).local([8]));
    let data = launch.local::<u32>(1);
    let flag = launch.local::<AtomicUint>(1);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let (d, f) = (wi.local(data), wi.local(flag));
        if l == 0 {
            f.at(0).init(0);
            d.set(0, 77);
            f.at(0).store_explicit_scope(1, Release, WorkGroupScope);
        }
        // No barrier: work-item 0 publishes with a release store, the others
        // acquire it; the ones that see the flag may read the data.
        if f.at(0).load_explicit_scope(Acquire, WorkGroupScope) == 1 {
            o.set(l, d.get(0));
        }
    });
    expect_none(&r);
    assert_eq!(out.to_vec(), vec![77; 8]);
}

#[test]
fn compare_exchange_maximum() {
    let vals: Vec<i32> = (0..256).map(|i| (i * 37) % 251).collect();
    let input = Buffer::from_slice(&vals);
    let best: std::sync::Arc<Buffer<AtomicInt>> = std::sync::Arc::new(Buffer::from_values(&[-1]));
    let b = best.clone();
    let r = check(
        Launch::new("cas_max", NdRange::new([256]).local([64])),
        move |wi| {
            let v = input.get(wi.get_global_id(0));
            let mut cur = b.at(0).load_explicit(Relaxed);
            while cur < v && !b.at(0).compare_exchange_weak(&mut cur, v) {}
        },
    );
    expect_none(&r);
    assert_eq!(best.at(0).load(), *vals.iter().max().unwrap());
}

#[test]
fn legacy_counters_from_every_work_item() {
    let counts = std::sync::Arc::new(Buffer::<u32>::new(4));
    let c = counts.clone();
    let r = check(
        Launch::new("legacy", NdRange::new([64]).local([16])),
        move |wi| {
            c.atomic_inc(wi.get_global_id(0) % 4);
        },
    );
    expect_none(&r);
    assert_eq!(counts.to_vec(), vec![16; 4]);
}

#[test]
fn atomic_init_then_barrier_then_atomics() {
    let out = std::sync::Arc::new(Buffer::<i32>::new(1));
    let o = out.clone();
    let mut launch = Launch::new("init_barrier", NdRange::new([32]).local([32]));
    let acc = launch.local::<AtomicInt>(1);
    let r = check(launch, move |wi| {
        let a = wi.local(acc);
        if wi.get_local_id(0) == 0 {
            a.at(0).init(100);
        }
        wi.barrier(LOCAL);
        a.at(0).fetch_sub_explicit_scope(1, Relaxed, WorkGroupScope);
        wi.barrier(LOCAL);
        if wi.get_local_id(0) == 31 {
            o.set(0, a.at(0).load_explicit_scope(Relaxed, WorkGroupScope));
        }
    });
    expect_none(&r);
    assert_eq!(out.get(0), 68);
}

#[test]
fn non_uniform_groups_with_barriers() {
    let out = std::sync::Arc::new(Buffer::<u32>::new(100));
    let o = out.clone();
    let mut launch = Launch::new("non_uniform", NdRange::new([100]).local([32]));
    let tile = launch.local::<u32>(32);
    let r = check(launch, move |wi| {
        let (l, n) = (wi.get_local_id(0), wi.get_local_size(0));
        let t = wi.local(tile);
        t.set(l, wi.get_global_id(0) as u32);
        wi.barrier(LOCAL);
        o.set(wi.get_global_id(0), t.get(n - 1 - l));
    });
    expect_none(&r);
    assert_eq!(out.get(96), 99);
    assert_eq!(out.get(0), 31);
}
