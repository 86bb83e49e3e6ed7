//! Every sample kernel, at a small size, matches its sequential reference,
//! on one worker thread and on several.

use clsync::Runtime;
use clsync_samples::{all, Size};

#[test]
fn every_sample_verifies() {
    for threads in [1, 2, 3] {
        let rt = Runtime::with_threads(threads);
        for sample in all() {
            let report = sample
                .run(&rt, Size::Small)
                .unwrap_or_else(|e| panic!("{}: {e}", sample.name()));
            assert_eq!(
                report.verified,
                Ok(()),
                "{} on {threads} thread(s)",
                sample.name()
            );
            assert!(report.throughput.0 > 0.0);
        }
    }
}

#[test]
fn the_samples_are_the_five_the_readme_names() {
    let names: Vec<_> = all().iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "reduce",
            "scan",
            "histogram",
            "sub-group reverse",
            "host message passing"
        ]
    );
}

/// The samples are correct kernels: checked, they verify and the checker
/// finds nothing (a finding would fail the launch with its reports).
#[test]
fn every_sample_is_clean_under_the_checker() {
    let rt = Runtime::with_threads(2).with_checking(true);
    for sample in all() {
        let report = sample
            .run(&rt, Size::Small)
            .unwrap_or_else(|e| panic!("{}: {e}", sample.name()));
        assert_eq!(report.verified, Ok(()), "{} checked", sample.name());
    }
}

/// Each sample kernel is written per work-item and runs lifted by
/// `#[kernel]`; on the general engine, as written, it gives the same
/// output, which is the sequential reference's.
#[test]
fn every_lifted_kernel_equals_itself_on_the_general_engine() {
    use clsync::{AtomicUint, Buffer, Launch, NdRange};
    use clsync_samples::{histogram, reduce, scan, subgroup_reverse};

    let rt = Runtime::with_threads(2);
    let words: Vec<u32> = (0..1000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();

    // Reduce: one level, a partial last group.
    let input = Buffer::from_slice(&words);
    let groups = words.len().div_ceil(reduce::GROUP);
    let mut launch = Launch::new("reduce", NdRange::new([words.len()]).local([reduce::GROUP]));
    let scratch = launch.local::<u32>(reduce::GROUP);
    let (lifted, general) = (Buffer::<u32>::new(groups), Buffer::<u32>::new(groups));
    reduce::reduce_kernel_launch(&rt, &launch, &input, &lifted, scratch).unwrap();
    rt.launch(&launch, |wi| {
        reduce::reduce_kernel(wi, &input, &general, scratch)
    })
    .unwrap();
    let want: Vec<u32> = words
        .chunks(reduce::GROUP)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    assert_eq!(lifted.to_vec(), want);
    assert_eq!(general.to_vec(), want);

    // Scan: each group scanned, its total written.
    let ints: Vec<i32> = words.iter().map(|&w| (w % 2001) as i32 - 1000).collect();
    let mut launch = Launch::new("scan", NdRange::new([ints.len()]).local([scan::GROUP]));
    let tile = launch.local::<i32>(scan::GROUP);
    let mut outs = Vec::new();
    for engine in ["lifted", "general"] {
        let (data, totals) = (Buffer::from_slice(&ints), Buffer::<i32>::new(groups));
        match engine {
            "lifted" => scan::scan_kernel_launch(&rt, &launch, &data, &totals, tile).unwrap(),
            _ => rt
                .launch(&launch, |wi| scan::scan_kernel(wi, &data, &totals, tile))
                .unwrap(),
        };
        outs.push((data.to_vec(), totals.to_vec()));
    }
    let scanned: Vec<i32> = ints
        .chunks(scan::GROUP)
        .flat_map(|c| {
            c.iter().scan(0i32, |a, &v| {
                *a = a.wrapping_add(v);
                Some(*a)
            })
        })
        .collect();
    let totals: Vec<i32> = ints
        .chunks(scan::GROUP)
        .map(|c| c.iter().fold(0i32, |a, &v| a.wrapping_add(v)))
        .collect();
    assert_eq!(outs[0], (scanned.clone(), totals.clone()), "lifted");
    assert_eq!(outs[1], (scanned, totals), "general");

    // Histogram.
    let bytes: Vec<u8> = words.iter().map(|&w| (w >> 24) as u8).collect();
    let data = Buffer::from_slice(&bytes);
    let items = bytes.len().div_ceil(histogram::PER_ITEM);
    let launch = Launch::new(
        "histogram",
        NdRange::new([items]).local([items.min(histogram::GROUP)]),
    );
    let (lifted, general): (Buffer<AtomicUint>, Buffer<AtomicUint>) =
        (Buffer::new(histogram::BINS), Buffer::new(histogram::BINS));
    histogram::histogram_kernel_launch(&rt, &launch, &data, &lifted).unwrap();
    rt.launch(&launch, |wi| {
        histogram::histogram_kernel(wi, &data, &general)
    })
    .unwrap();
    let mut want = vec![0u32; histogram::BINS];
    bytes.iter().for_each(|&b| want[b as usize] += 1);
    assert_eq!(lifted.to_vec(), want);
    assert_eq!(general.to_vec(), want);

    // Sub-group reverse: local 200, sub-groups of 32 (the last one partial).
    let input = Buffer::from_slice(&words);
    let mut launch = Launch::new(
        "reverse",
        NdRange::new([words.len()]).local([200]).sub_group_size(32),
    );
    let tmp = launch.local::<u32>(200);
    let (lifted, general) = (
        Buffer::<u32>::new(words.len()),
        Buffer::<u32>::new(words.len()),
    );
    subgroup_reverse::reverse_kernel_launch(&rt, &launch, &input, &lifted, tmp).unwrap();
    rt.launch(&launch, |wi| {
        subgroup_reverse::reverse_kernel(wi, &input, &general, tmp)
    })
    .unwrap();
    let want = subgroup_reverse::reference(&words, 200, 32);
    assert_eq!(lifted.to_vec(), want);
    assert_eq!(general.to_vec(), want);
}
