//! Images and samplers in OpenCL C kernels, each against a sequential
//! computation of the OpenCL C specification's conversion, addressing and
//! filtering rules: formats written and read back, samplers with every
//! addressing mode, nearest and linear, normalized coordinates or not,
//! arrays and 3D images, the queries, images over buffers; unchecked and
//! checked.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, ChannelOrder, ChannelType, Image, ImageFormat, ImageShape, Sampler};

const SRC: &str = r#"
kernel void write_read(write_only image2d_t out, read_only image2d_t in2, global float4 *vals, global float4 *back) {
    int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    write_imagef(out, (int2)(x, y), vals[y * w + x]);
}
kernel void read_back(read_only image2d_t in, global float4 *back) {
    int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    back[y * w + x] = read_imagef(in, (int2)(x, y));
}
kernel void sample2d(read_only image2d_t in, sampler_t s, global const float2 *at, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(in, s, at[i]);
}
kernel void sample_int(read_only image2d_t in, sampler_t s, global const int2 *at, global uint4 *out) {
    int i = get_global_id(0);
    out[i] = read_imageui(in, s, at[i]);
}
kernel void ints(read_write image2d_t img, global const int4 *vals, global int4 *back) {
    int x = get_global_id(0);
    write_imagei(img, (int2)(x, 0), vals[x]);
    atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
    back[x] = read_imagei(img, (int2)(x, 0));
}
kernel void volume(read_only image3d_t v, sampler_t s, global const float4 *at, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(v, s, at[i]);
}
kernel void layers(read_only image2d_array_t a, sampler_t s, global const float4 *at, global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(a, s, at[i]);
}
kernel void queries(read_only image3d_t v, read_only image2d_array_t a, read_only image1d_t o, global int *out) {
    out[0] = get_image_width(v); out[1] = get_image_height(v); out[2] = get_image_depth(v);
    int4 d = get_image_dim(v);
    out[3] = d.x; out[4] = d.y; out[5] = d.z;
    out[6] = get_image_channel_order(v); out[7] = get_image_channel_data_type(v);
    out[8] = (int)get_image_array_size(a); out[9] = get_image_width(o);
    out[10] = get_image_channel_order(o); out[11] = get_image_channel_data_type(o);
}
kernel void shift(read_only image2d_t in, write_only image2d_t out, local float4 *row) {
    int x = get_global_id(0), y = get_global_id(1), l = get_local_id(0), n = get_local_size(0);
    row[l] = read_imagef(in, (int2)(x, y));
    barrier(CLK_LOCAL_MEM_FENCE);
    write_imagef(out, (int2)(x, y), row[(l + 1) % n]);
}
kernel void racy(write_only image2d_t out) {
    write_imagef(out, (int2)(0, 0), (float4)(get_global_id(0)));
}
kernel void outside(write_only image2d_t out) {
    write_imagef(out, (int2)(get_global_id(0), 0), (float4)(1.0f));
}
"#;

fn fmt(order: ChannelOrder, ty: ChannelType) -> ImageFormat {
    ImageFormat { order, ty }
}

fn floats(v: &[[f32; 4]]) -> Vec<f32> {
    v.iter().flatten().copied().collect()
}

fn build() -> clsync_opencl::Program {
    common::build(SRC, "images.cl", "-cl-std=CL2.0")
}

/// What a texel of `ty` reads back as after `write_imagef` of `x`: the
/// specification's conversion to the channel type (round to nearest even,
/// saturate) and back.
fn through(ty: ChannelType, x: f32) -> f32 {
    match ty {
        ChannelType::UnormInt8 => (x * 255.0).round_ties_even().clamp(0.0, 255.0) / 255.0,
        ChannelType::UnormInt16 => (x * 65535.0).round_ties_even().clamp(0.0, 65535.0) / 65535.0,
        ChannelType::SnormInt8 => {
            ((x * 127.0).round_ties_even().clamp(-128.0, 127.0) / 127.0).max(-1.0)
        }
        ChannelType::SnormInt16 => {
            ((x * 32767.0).round_ties_even().clamp(-32768.0, 32767.0) / 32767.0).max(-1.0)
        }
        _ => x,
    }
}

#[test]
fn every_float_format_and_order_reads_back_what_was_written() {
    let p = build();
    let (w, h) = (5usize, 3usize);
    let vals: Vec<[f32; 4]> = (0..w * h)
        .map(|i| {
            let t = i as f32 / 7.0 - 0.6;
            [t, 0.3 - t, 1.5 * t, 0.25]
        })
        .collect();
    let orders = [
        ChannelOrder::R,
        ChannelOrder::A,
        ChannelOrder::Rg,
        ChannelOrder::Ra,
        ChannelOrder::Rgba,
        ChannelOrder::Bgra,
        ChannelOrder::Argb,
        ChannelOrder::Intensity,
        ChannelOrder::Luminance,
    ];
    let types = [
        ChannelType::UnormInt8,
        ChannelType::UnormInt16,
        ChannelType::SnormInt8,
        ChannelType::SnormInt16,
        ChannelType::HalfFloat,
        ChannelType::Float,
    ];
    for checked in [false, true] {
        for order in orders {
            for ty in types {
                let img = Image::new(
                    ImageShape::D2 {
                        width: w,
                        height: h,
                    },
                    fmt(order, ty),
                )
                .named("img");
                let v = Buffer::from_slice(&floats(&vals));
                let back = Buffer::<f32>::new(4 * w * h);
                let range = NdRange::new([w, h]);
                let found = common::run(
                    &p,
                    "write_read",
                    range.clone(),
                    &[
                        Arg::Image(&img),
                        Arg::Image(&img),
                        Arg::Buffer(&v),
                        Arg::Buffer(&back),
                    ],
                    checked,
                );
                assert!(found.is_empty(), "{found:?}");
                let found = common::run(
                    &p,
                    "read_back",
                    range,
                    &[Arg::Image(&img), Arg::Buffer(&back)],
                    checked,
                );
                assert!(found.is_empty(), "{found:?}");
                let got = back.to_vec();
                for (i, val) in vals.iter().enumerate() {
                    let c = |k: usize| through(ty, val[k]);
                    let want = match order {
                        ChannelOrder::R => [c(0), 0.0, 0.0, 1.0],
                        ChannelOrder::A => [0.0, 0.0, 0.0, c(3)],
                        ChannelOrder::Rg => [c(0), c(1), 0.0, 1.0],
                        ChannelOrder::Ra => [c(0), 0.0, 0.0, c(3)],
                        ChannelOrder::Intensity => [c(0); 4],
                        ChannelOrder::Luminance => [c(0), c(0), c(0), 1.0],
                        _ => [c(0), c(1), c(2), c(3)],
                    };
                    for k in 0..4 {
                        let g = got[4 * i + k];
                        // A half's 11 significant bits: relative error
                        // under 2^-11 (every value here is in its range).
                        let tol = if ty == ChannelType::HalfFloat {
                            want[k].abs() / 2048.0
                        } else {
                            1e-6
                        };
                        assert!(
                            (g - want[k]).abs() <= tol,
                            "{order:?} {ty:?} texel {i} channel {k}: {g} != {}",
                            want[k]
                        );
                    }
                }
            }
        }
    }
}

/// The specification's addressing of unnormalized coordinate `u` (or
/// normalized `s`) along `n` texels: the texels a nearest filter (`[i, i]`)
/// or a linear one (`[i0, i1]`, weight of `i1`) takes; -1 and `n` are the
/// border.
fn spec_address(mode: u32, normalized: bool, linear: bool, s: f32, n: usize) -> ([i64; 2], f32) {
    let w = n as f32;
    let ni = n as i64;
    let u = match mode {
        Sampler::REPEAT => (s - s.floor()) * w,
        Sampler::MIRRORED_REPEAT => (s - 2.0 * (0.5 * s).round_ties_even()).abs() * w,
        _ if normalized => s * w,
        _ => s,
    };
    if !linear {
        let mut i = u.floor() as i64;
        match mode {
            Sampler::REPEAT if i > ni - 1 => i -= ni,
            Sampler::MIRRORED_REPEAT => i = i.min(ni - 1),
            Sampler::CLAMP_TO_EDGE => i = i.clamp(0, ni - 1),
            Sampler::CLAMP => i = i.clamp(-1, ni),
            _ => {}
        }
        return ([i, i], 0.0);
    }
    let mut i0 = (u - 0.5).floor() as i64;
    let mut i1 = i0 + 1;
    let a = (u - 0.5) - (u - 0.5).floor();
    match mode {
        Sampler::REPEAT => {
            if i0 < 0 {
                i0 += ni;
            }
            if i1 > ni - 1 {
                i1 -= ni;
            }
        }
        Sampler::MIRRORED_REPEAT => {
            i0 = i0.max(0);
            i1 = i1.min(ni - 1);
        }
        Sampler::CLAMP_TO_EDGE => {
            i0 = i0.clamp(0, ni - 1);
            i1 = i1.clamp(0, ni - 1);
        }
        _ => {
            i0 = i0.clamp(-1, ni);
            i1 = i1.clamp(-1, ni);
        }
    }
    ([i0, i1], a)
}

#[test]
fn samplers_address_and_filter_as_the_specification_says() {
    let p = build();
    let (w, h) = (4usize, 3usize);
    let value = |x: i64, y: i64| -> f32 {
        if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
            0.0 // CLK_ADDRESS_CLAMP's border colour, r = 0
        } else {
            (x + 10 * y) as f32 + 0.5
        }
    };
    let img = Image::new(
        ImageShape::D2 {
            width: w,
            height: h,
        },
        fmt(ChannelOrder::R, ChannelType::Float),
    );
    let bytes: Vec<u8> = (0..h as i64)
        .flat_map(|y| (0..w as i64).flat_map(move |x| value(x, y).to_le_bytes()))
        .collect();
    img.write_bytes(&bytes);
    let unnormalized: Vec<[f32; 2]> = vec![
        [0.0, 0.0],
        [1.5, 2.5],
        [3.99, 0.2],
        [0.75, 1.25],
        [2.5, 1.5],
        [-0.7, 1.0],
        [4.6, 2.9],
        [1.0, -2.0],
        [7.0, 9.0],
    ];
    let normalized: Vec<[f32; 2]> = vec![
        [0.1, 0.1],
        [0.5, 0.5],
        [0.99, 0.4],
        [1.3, -0.2],
        [-0.6, 2.7],
        [2.05, 1.5],
        [0.375, 0.8333],
        [-1.2, 0.0],
    ];
    let modes = [
        Sampler::CLAMP_TO_EDGE,
        Sampler::CLAMP,
        Sampler::REPEAT,
        Sampler::MIRRORED_REPEAT,
        0,
    ];
    for checked in [false, true] {
        for mode in modes {
            for normalized_coords in [false, true] {
                if !normalized_coords
                    && (mode == Sampler::REPEAT || mode == Sampler::MIRRORED_REPEAT)
                {
                    continue; // requires normalized coordinates
                }
                for linear in [false, true] {
                    let coords = if normalized_coords {
                        &normalized
                    } else {
                        &unnormalized
                    };
                    // CLK_ADDRESS_NONE: only coordinates inside the image.
                    let coords: Vec<[f32; 2]> = coords
                        .iter()
                        .copied()
                        .filter(|c| {
                            mode != 0 || {
                                let k = if normalized_coords {
                                    [w as f32, h as f32]
                                } else {
                                    [1.0, 1.0]
                                };
                                (0..2).all(|d| {
                                    c[d] * k[d] >= 0.5 && c[d] * k[d] < [w, h][d] as f32 - 0.5
                                })
                            }
                        })
                        .collect();
                    let bits = (normalized_coords as u32)
                        | mode
                        | if linear {
                            Sampler::LINEAR
                        } else {
                            Sampler::NEAREST
                        };
                    let at =
                        Buffer::from_slice(&coords.iter().flatten().copied().collect::<Vec<_>>());
                    let out = Buffer::<f32>::new(4 * coords.len());
                    let found = common::run(
                        &p,
                        "sample2d",
                        NdRange::new([coords.len()]),
                        &[
                            Arg::Image(&img),
                            Arg::Sampler(Sampler(bits)),
                            Arg::Buffer(&at),
                            Arg::Buffer(&out),
                        ],
                        checked,
                    );
                    assert!(found.is_empty(), "{found:?}");
                    let got = out.to_vec();
                    for (i, c) in coords.iter().enumerate() {
                        let (xs, ax) = spec_address(mode, normalized_coords, linear, c[0], w);
                        let (ys, ay) = spec_address(mode, normalized_coords, linear, c[1], h);
                        let want = if linear {
                            (1.0 - ax) * (1.0 - ay) * value(xs[0], ys[0])
                                + ax * (1.0 - ay) * value(xs[1], ys[0])
                                + (1.0 - ax) * ay * value(xs[0], ys[1])
                                + ax * ay * value(xs[1], ys[1])
                        } else {
                            value(xs[0], ys[0])
                        };
                        let g = got[4 * i];
                        assert!(
                            (g - want).abs() <= 1e-4 * want.abs().max(1.0),
                            "sampler {bits:#x} at {c:?}: {g} != {want}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn integer_images_saturate_and_integer_coordinates_clamp() {
    let p = build();
    let img = Image::new(
        ImageShape::D2 {
            width: 4,
            height: 1,
        },
        fmt(ChannelOrder::Rgba, ChannelType::SignedInt8),
    );
    let vals: Vec<i32> = vec![
        1, -2, 300, -300, 127, -128, 5, 0, 40000, -1, 0, 7, 3, 2, 1, 0,
    ];
    let v = Buffer::from_slice(&vals);
    let back = Buffer::<i32>::new(16);
    for checked in [false, true] {
        let found = common::run(
            &p,
            "ints",
            NdRange::new([4]),
            &[Arg::Image(&img), Arg::Buffer(&v), Arg::Buffer(&back)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let want: Vec<i32> = vals.iter().map(|x| (*x).clamp(-128, 127)).collect();
        assert_eq!(back.to_vec(), want);
    }
    // read_imageui with a sampler at integer coordinates: clamp to edge.
    let u = Image::new(
        ImageShape::D2 {
            width: 3,
            height: 2,
        },
        fmt(ChannelOrder::R, ChannelType::UnsignedInt16),
    );
    u.write_bytes(&[1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 0xff, 0xff]);
    let at = Buffer::from_slice(&[0i32, 0, 2, 1, -5, 0, 9, 9, 1, 1]);
    let out = Buffer::<u32>::new(20);
    let s = Sampler(Sampler::CLAMP_TO_EDGE | Sampler::NEAREST);
    common::run(
        &p,
        "sample_int",
        NdRange::new([5]),
        &[
            Arg::Image(&u),
            Arg::Sampler(s),
            Arg::Buffer(&at),
            Arg::Buffer(&out),
        ],
        false,
    );
    let r: Vec<u32> = out.to_vec().chunks(4).map(|c| c[0]).collect();
    assert_eq!(r, [1, 0xffff, 1, 0xffff, 5]);
    assert_eq!(out.to_vec()[3], 1, "alpha of an R image is 1");
}

#[test]
fn volumes_arrays_and_queries() {
    let p = build();
    let (w, h, d) = (3usize, 2usize, 4usize);
    let v = Image::new(
        ImageShape::D3 {
            width: w,
            height: h,
            depth: d,
        },
        fmt(ChannelOrder::R, ChannelType::Float),
    );
    let val = |x: usize, y: usize, z: usize| (x + 10 * y + 100 * z) as f32;
    let bytes: Vec<u8> = (0..d)
        .flat_map(|z| {
            (0..h).flat_map(move |y| (0..w).flat_map(move |x| val(x, y, z).to_le_bytes()))
        })
        .collect();
    v.write_bytes(&bytes);
    let s = Sampler(Sampler::CLAMP_TO_EDGE | Sampler::NEAREST);
    let at = Buffer::from_slice(&[
        0.5f32, 0.5, 0.5, 0.0, 2.7, 1.2, 3.9, 0.0, 9.0, -1.0, 2.0, 0.0,
    ]);
    let out = Buffer::<f32>::new(12);
    common::run(
        &p,
        "volume",
        NdRange::new([3]),
        &[
            Arg::Image(&v),
            Arg::Sampler(s),
            Arg::Buffer(&at),
            Arg::Buffer(&out),
        ],
        true,
    );
    let r: Vec<f32> = out.to_vec().chunks(4).map(|c| c[0]).collect();
    assert_eq!(r, [val(0, 0, 0), val(2, 1, 3), val(2, 0, 2)]);

    // A 2D array: the layer is the third coordinate, rounded and clamped.
    let a = Image::new(
        ImageShape::D2Array {
            width: 2,
            height: 2,
            layers: 3,
        },
        fmt(ChannelOrder::R, ChannelType::Float),
    );
    let bytes: Vec<u8> = (0..12).flat_map(|i| (i as f32).to_le_bytes()).collect();
    a.write_bytes(&bytes);
    let at = Buffer::from_slice(&[
        1.5f32, 0.5, 1.4, 0.0, 0.5, 1.5, 2.6, 0.0, 0.5, 0.5, -3.0, 0.0,
    ]);
    common::run(
        &p,
        "layers",
        NdRange::new([3]),
        &[
            Arg::Image(&a),
            Arg::Sampler(s),
            Arg::Buffer(&at),
            Arg::Buffer(&out),
        ],
        false,
    );
    let r: Vec<f32> = out.to_vec().chunks(4).map(|c| c[0]).collect();
    assert_eq!(r, [5.0, 10.0, 0.0]);

    let o = Image::new(
        ImageShape::D1 { width: 7 },
        fmt(ChannelOrder::Bgra, ChannelType::UnormInt8),
    );
    let q = Buffer::<i32>::new(12);
    common::run(
        &p,
        "queries",
        NdRange::new([1]),
        &[
            Arg::Image(&v),
            Arg::Image(&a),
            Arg::Image(&o),
            Arg::Buffer(&q),
        ],
        false,
    );
    // CL_R = 0x10B0, CL_FLOAT = 0x10DE, CL_BGRA = 0x10B6, CL_UNORM_INT8 = 0x10D2.
    assert_eq!(
        q.to_vec(),
        [3, 2, 4, 3, 2, 4, 0x10B0, 0x10DE, 3, 7, 0x10B6, 0x10D2]
    );
}

#[test]
fn checked_image_writes_report_races_and_coordinates_outside() {
    let p = build();
    let img = Image::new(
        ImageShape::D2 {
            width: 2,
            height: 2,
        },
        fmt(ChannelOrder::Rgba, ChannelType::Float),
    )
    .named("out");
    let found = common::run(
        &p,
        "racy",
        NdRange::new([4]).local([4]),
        &[Arg::Image(&img)],
        true,
    );
    // Four work-items write texel 0 with four values.
    assert_eq!(found.checker.len(), 1, "{found:?}");
    let r = &found.checker[0];
    assert_eq!(
        clsync_opencl::exec::report::headline(r),
        "Write-write data race at image memory address `out`[0]"
    );
    assert_eq!(r.site.line, 47);
    let found = common::run(&p, "outside", NdRange::new([4]), &[Arg::Image(&img)], true);
    assert_eq!(
        common::headlines_at(&found),
        [("Invalid write to image", 50)],
        "{found:?}"
    );
    assert_eq!(found.diagnostics[0].count, 2);
    assert_eq!(img.read_f32([1, 0, 0]), [1.0; 4]);
    // Unchecked, the writes outside are skipped.
    let img = Image::new(
        ImageShape::D2 {
            width: 2,
            height: 2,
        },
        fmt(ChannelOrder::Rgba, ChannelType::Float),
    );
    common::run(&p, "outside", NdRange::new([4]), &[Arg::Image(&img)], false);
    assert_eq!(img.read_f32([1, 1, 0]), [0.0; 4]);
}

#[test]
fn images_in_a_kernel_with_barriers_on_both_engines() {
    let p = build();
    let (w, h) = (8usize, 2usize);
    let f = fmt(ChannelOrder::Rgba, ChannelType::UnormInt8);
    let src = Image::new(
        ImageShape::D2 {
            width: w,
            height: h,
        },
        f,
    );
    let bytes: Vec<u8> = (0..(w * h * 4) as u8).collect();
    src.write_bytes(&bytes);
    for (engine, checked) in [("loops", false), ("coroutines", true)] {
        let dst = Image::new(
            ImageShape::D2 {
                width: w,
                height: h,
            },
            f,
        );
        let found = common::run(
            &p,
            "shift",
            NdRange::new([w, h]).local([4, 1]),
            &[Arg::Image(&src), Arg::Image(&dst), Arg::Local(64)],
            checked,
        );
        assert!(found.is_empty(), "{engine}: {found:?}");
        let got = dst.to_bytes();
        for y in 0..h {
            for x in 0..w {
                let from = (x / 4) * 4 + (x % 4 + 1) % 4;
                assert_eq!(
                    got[4 * (y * w + x)..][..4],
                    bytes[4 * (y * w + from)..][..4],
                    "{engine} ({x}, {y})"
                );
            }
        }
    }
    assert!(p.kernel("shift").unwrap().engine().is_ok());
}

#[test]
fn an_image_of_another_shape_is_refused_naming_the_argument() {
    let p = build();
    let v = Image::new(
        ImageShape::D3 {
            width: 2,
            height: 2,
            depth: 2,
        },
        fmt(ChannelOrder::R, ChannelType::Float),
    );
    let out = Buffer::<f32>::new(4);
    let at = Buffer::<f32>::new(2);
    let e = p
        .kernel("sample2d")
        .unwrap()
        .run(
            &clsync::Runtime::new(),
            NdRange::new([1]),
            &[
                Arg::Image(&v),
                Arg::Sampler(Sampler(Sampler::NEAREST)),
                Arg::Buffer(&at),
                Arg::Buffer(&out),
            ],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("argument 0 (`in`"), "{e}");
    assert!(e.contains("D3"), "{e}");
    assert!(e.contains("the kernel takes a 2D image"), "{e}");
}

/// `002_6c32435e912a3710.txt`: a barrier whose flags include
/// `CLK_IMAGE_MEM_FENCE` orders the image accesses before it against those
/// after it; one with only the local-memory flag does not, and a write
/// before it and another work-item's read after it race.
#[test]
fn an_image_fence_in_a_barrier_orders_texels_across_work_items() {
    let src = "kernel void pass(read_write image2d_t img, global float *out) {\n  int i = get_global_id(0);\n  if (i == 0) write_imagef(img, (int2)(0, 0), (float4)(5.0f));\n  barrier(FLAGS);\n  if (i == 1) out[0] = read_imagef(img, (int2)(0, 0)).x;\n}\n";
    for (flags, race) in [
        ("CLK_IMAGE_MEM_FENCE", false),
        ("CLK_LOCAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE", false),
        ("CLK_LOCAL_MEM_FENCE", true),
    ] {
        let p = common::build(
            src,
            "fence.cl",
            &format!("-cl-std=CL2.0 -D FLAGS=\"{flags}\""),
        );
        let img = Image::new(
            ImageShape::D2 {
                width: 1,
                height: 1,
            },
            fmt(ChannelOrder::Rgba, ChannelType::Float),
        )
        .named("img");
        let out = Buffer::<f32>::new(1);
        let found = common::run(
            &p,
            "pass",
            NdRange::new([2]).local([2]),
            &[Arg::Image(&img), Arg::Buffer(&out)],
            true,
        );
        let heads: Vec<String> = found
            .checker
            .iter()
            .map(clsync_opencl::exec::report::headline)
            .collect();
        if race {
            assert_eq!(
                heads,
                ["Read-write data race at image memory address `img`[0]"],
                "{flags}"
            );
        } else {
            assert!(found.is_empty(), "{flags}: {found:?}");
            assert_eq!(out.to_vec(), [5.0]);
        }
    }
}

/// `image1d_buffer_t`: an image over a buffer's bytes reads what the
/// buffer holds and its writes are the buffer's contents (integer texels,
/// the width and format queries); unchecked and checked. A plain 1D image
/// where the kernel takes one made from a buffer is refused by name.
#[test]
fn images_over_buffers_share_the_buffers_bytes() {
    let p = common::build(
        r#"
        kernel void over(read_only image1d_buffer_t in, write_only image1d_buffer_t out, global int *q) {
            int i = get_global_id(0);
            uint4 t = read_imageui(in, i);
            write_imageui(out, i, t.yxwz + (uint4)(1));
            if (i == 0) {
                q[0] = get_image_width(in);
                q[1] = get_image_channel_order(out);
                q[2] = get_image_channel_data_type(out);
            }
        }"#,
        "over.cl",
        "-cl-std=CL1.2",
    );
    let n = 40;
    let f = fmt(ChannelOrder::Rgba, ChannelType::UnsignedInt16);
    let start: Vec<u16> = (0..n * 4).map(|k| (k * 37 % 1000) as u16).collect();
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    for checked in [false, true] {
        let a = std::sync::Arc::new(Buffer::<u8>::from_slice(&bytes(&start)));
        let b = std::sync::Arc::new(Buffer::<u8>::new(n * 8));
        let (ia, ib) = (Image::from_buffer(a, f), Image::from_buffer(b.clone(), f));
        let q = Buffer::<i32>::new(3);
        let found = common::run(
            &p,
            "over",
            NdRange::new([n]),
            &[Arg::Image(&ia), Arg::Image(&ib), Arg::Buffer(&q)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let out: Vec<u16> = b
            .to_vec()
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        for i in 0..n {
            let t = &start[i * 4..i * 4 + 4];
            let want = [t[1] + 1, t[0] + 1, t[3] + 1, t[2] + 1];
            assert_eq!(
                &out[i * 4..i * 4 + 4],
                &want,
                "texel {i} (checked: {checked})"
            );
        }
        // CLK_RGBA, CLK_UNSIGNED_INT16.
        assert_eq!(q.to_vec(), vec![n as i32, 0x10B5, 0x10DB]);
    }
    let plain = Image::new(ImageShape::D1 { width: n }, f);
    let e = p
        .kernel("over")
        .unwrap()
        .run(
            &clsync::Runtime::new(),
            NdRange::new([1]),
            &[
                Arg::Image(&plain),
                Arg::Image(&plain),
                Arg::Buffer(&Buffer::<i32>::new(3)),
            ],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("the kernel takes a buffer image"), "{e}");
}

/// The packed formats (565, 555, 101010 and 101010_2), the sRGB orders
/// and ABGR: what `write_imagef` stores, against the texel bytes the
/// specification lays out (the first channel in the highest bits of a
/// packed word; sRGB encoding by its formula, rounded to 8 bits), and what
/// `read_imagef` gives back (the fields normalized, sRGB decoded to linear,
/// an unused channel's alpha 1); unchecked and checked.
#[test]
fn packed_srgb_and_abgr_texels_are_laid_out_as_specified() {
    let p = build();
    let (w, h) = (4usize, 2usize);
    let vals: Vec<[f32; 4]> = (0..w * h)
        .map(|i| {
            let t = i as f32 / 9.0;
            [t, 1.0 - t, t * t, 0.7 - t / 2.0]
        })
        .collect();
    let rte = |x: f32, max: u32| (x.clamp(0.0, 1.0) * max as f32).round_ties_even() as u32;
    let encode_srgb = |l: f32| {
        let l = f64::from(l.clamp(0.0, 1.0));
        let c = if l <= 0.0031308 {
            12.92 * l
        } else {
            1.055 * l.powf(1.0 / 2.4) - 0.055
        };
        rte(c as f32, 255)
    };
    let decode_srgb = |b: u32| {
        let c = f64::from(b) / 255.0;
        (if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }) as f32
    };
    // A packed texel's bytes: each channel in its field, from the lowest
    // bit `low`, `bits` wide.
    let packed = |fields: &[(u32, u32)], v: &[f32; 4], bytes: usize| {
        let word = fields
            .iter()
            .enumerate()
            .fold(0u32, |acc, (c, (low, bits))| {
                acc | ((v[c].clamp(0.0, 1.0) * ((1u32 << bits) - 1) as f32).round_ties_even()
                    as u32)
                    << low
            });
        word.to_le_bytes()[..bytes].to_vec()
    };
    // Each format, with a packed type's fields (red, green, blue, alpha).
    type Fields = &'static [(u32, u32)];
    let cases: Vec<(ChannelOrder, ChannelType, Fields)> = vec![
        (
            ChannelOrder::Rgb,
            ChannelType::UnormShort565,
            &[(11, 5), (5, 6), (0, 5)],
        ),
        (
            ChannelOrder::Rgbx,
            ChannelType::UnormShort555,
            &[(10, 5), (5, 5), (0, 5)],
        ),
        (
            ChannelOrder::Rgb,
            ChannelType::UnormInt101010,
            &[(20, 10), (10, 10), (0, 10)],
        ),
        (
            ChannelOrder::Rgba,
            ChannelType::UnormInt101010_2,
            &[(22, 10), (12, 10), (2, 10), (0, 2)],
        ),
        (ChannelOrder::Srgba, ChannelType::UnormInt8, &[]),
        (ChannelOrder::Sbgra, ChannelType::UnormInt8, &[]),
        (ChannelOrder::Srgbx, ChannelType::UnormInt8, &[]),
        (ChannelOrder::Abgr, ChannelType::UnormInt8, &[]),
    ];
    for checked in [false, true] {
        for (order, ty, fields) in &cases {
            let img = Image::new(
                ImageShape::D2 {
                    width: w,
                    height: h,
                },
                fmt(*order, *ty),
            );
            let v = Buffer::from_slice(&floats(&vals));
            let back = Buffer::<f32>::new(4 * w * h);
            let range = NdRange::new([w, h]);
            let args = [
                Arg::Image(&img),
                Arg::Image(&img),
                Arg::Buffer(&v),
                Arg::Buffer(&back),
            ];
            assert!(common::run(&p, "write_read", range.clone(), &args, checked).is_empty());
            let args = [Arg::Image(&img), Arg::Buffer(&back)];
            assert!(common::run(&p, "read_back", range, &args, checked).is_empty());
            let (bytes, got) = (img.to_bytes(), back.to_vec());
            let tb = bytes.len() / (w * h);
            for (i, val) in vals.iter().enumerate() {
                let srgb = |k: usize| encode_srgb(val[k]) as u8;
                let unorm8 = |k: usize| rte(val[k], 255) as u8;
                let (want_bytes, want): (Vec<u8>, [f32; 4]) = if !fields.is_empty() {
                    let b = packed(fields, val, tb);
                    let mut word = [0u8; 4];
                    word[..tb].copy_from_slice(&b);
                    let word = u32::from_le_bytes(word);
                    let mut r = [0.0, 0.0, 0.0, 1.0];
                    for (c, (low, bits)) in fields.iter().enumerate() {
                        let max = (1u32 << bits) - 1;
                        r[c] = (word >> low & max) as f32 / max as f32;
                    }
                    (b, r)
                } else {
                    let lin = |k: usize| decode_srgb(srgb(k) as u32);
                    let n = |k: usize| unorm8(k) as f32 / 255.0;
                    match order {
                        ChannelOrder::Srgba => (
                            vec![srgb(0), srgb(1), srgb(2), unorm8(3)],
                            [lin(0), lin(1), lin(2), n(3)],
                        ),
                        ChannelOrder::Sbgra => (
                            vec![srgb(2), srgb(1), srgb(0), unorm8(3)],
                            [lin(0), lin(1), lin(2), n(3)],
                        ),
                        ChannelOrder::Srgbx => (
                            vec![srgb(0), srgb(1), srgb(2), 0],
                            [lin(0), lin(1), lin(2), 1.0],
                        ),
                        _ => (
                            vec![unorm8(3), unorm8(2), unorm8(1), unorm8(0)],
                            [n(0), n(1), n(2), n(3)],
                        ),
                    }
                };
                let at = format!("{order:?} {ty:?} texel {i} (checked: {checked})");
                assert_eq!(&bytes[i * tb..i * tb + tb], &want_bytes[..], "{at}");
                for k in 0..4 {
                    let g = got[4 * i + k];
                    assert!(
                        (g - want[k]).abs() <= 1e-6,
                        "{at} channel {k}: {g} != {}",
                        want[k]
                    );
                }
            }
        }
    }
}

/// Depth images (`cl_khr_depth_images`): `image2d_depth_t` and
/// `image2d_array_depth_t` read and write one `float`, stored as
/// `CL_UNORM_INT16` (rounded to the nearest of 65535 steps, saturated) or
/// `CL_FLOAT`; a sampled read takes the same texel; the queries name
/// `CL_DEPTH`. Unchecked and checked.
#[test]
fn depth_images_read_and_write_one_float() {
    let p = common::build(
        r#"
        constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
        kernel void depth(write_only image2d_depth_t out, global const float *v) {
            int x = get_global_id(0), y = get_global_id(1);
            write_imagef(out, (int2)(x, y), v[y * get_global_size(0) + x]);
        }
        kernel void back(read_only image2d_depth_t in, read_only image2d_array_depth_t a, global float *o, global int *q) {
            int x = get_global_id(0), y = get_global_id(1), i = y * get_global_size(0) + x;
            o[2 * i] = read_imagef(in, (int2)(x, y));
            o[2 * i + 1] = read_imagef(in, s, (float2)(x + 0.5f, y + 0.5f)) + read_imagef(a, (int4)(x, y, 1, 0));
            if (i == 0) { q[0] = get_image_channel_order(in); q[1] = get_image_channel_data_type(in); }
        }"#,
        "depth.cl",
        "-cl-std=CL2.0",
    );
    let (w, h) = (5usize, 3usize);
    let vals: Vec<f32> = (0..w * h).map(|i| i as f32 / 12.0 - 0.1).collect();
    for ty in [ChannelType::UnormInt16, ChannelType::Float] {
        for checked in [false, true] {
            let f = fmt(ChannelOrder::Depth, ty);
            let img = Image::new(
                ImageShape::D2 {
                    width: w,
                    height: h,
                },
                f,
            );
            let layers = Image::new(
                ImageShape::D2Array {
                    width: w,
                    height: h,
                    layers: 2,
                },
                f,
            );
            let v = Buffer::from_slice(&vals);
            let range = NdRange::new([w, h]);
            let args = [Arg::Image(&img), Arg::Buffer(&v)];
            assert!(common::run(&p, "depth", range.clone(), &args, checked).is_empty());
            let (o, q) = (Buffer::<f32>::new(2 * w * h), Buffer::<i32>::new(2));
            let args = [
                Arg::Image(&img),
                Arg::Image(&layers),
                Arg::Buffer(&o),
                Arg::Buffer(&q),
            ];
            assert!(common::run(&p, "back", range, &args, checked).is_empty());
            let o = o.to_vec();
            for (i, x) in vals.iter().enumerate() {
                let want = match ty {
                    ChannelType::Float => *x,
                    _ => (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() / 65535.0,
                };
                assert_eq!(o[2 * i], want, "{ty:?} texel {i}");
                // The array's layers are zero.
                assert_eq!(o[2 * i + 1], want, "{ty:?} sampled texel {i}");
            }
            let dt = if ty == ChannelType::Float {
                0x10DE
            } else {
                0x10D3
            };
            assert_eq!(q.to_vec(), vec![0x10BD, dt]);
        }
    }
}
