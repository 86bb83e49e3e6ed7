//! The math library of compiled code: the OpenCL.std functions that are
//! not a machine instruction, by their OpenCL.std numbers (the
//! `OpenclStd100Op` enum of the `spirv` crate), on Rust's `f32` and `f64`
//! functions (correctly rounded or within a few ULP, inside the bounds of
//! the specification's table of ULP values for the full profile).

macro_rules! math {
    ($un:ident, $bin:ident, $tern:ident, $t:ident, $pi:expr) => {
        /// A one-argument function of OpenCL.std, by its number.
        pub extern "C" fn $un(op: u32, x: $t) -> $t {
            const PI: $t = $pi;
            match op {
                0 => x.acos(),
                1 => x.acosh(),
                2 => x.acos() / PI,
                3 => x.asin(),
                4 => x.asinh(),
                5 => x.asin() / PI,
                6 => x.atan(),
                8 => x.atanh(),
                9 => x.atan() / PI,
                11 => x.cbrt(),
                14 | 67 | 81 => x.cos(),
                15 => x.cosh(),
                16 => (x * PI).cos(),
                19 | 69 | 83 => x.exp(),
                20 | 70 | 84 => x.exp2(),
                21 | 71 | 85 => (10.0 as $t).powf(x),
                22 => x.exp_m1(),
                30 => x - x.floor(),
                37 | 72 | 86 => x.ln(),
                38 | 73 | 87 => x.log2(),
                39 | 74 | 88 => x.log10(),
                40 => x.ln_1p(),
                41 => {
                    if x == 0.0 {
                        <$t>::NEG_INFINITY
                    } else {
                        x.abs().log2().floor()
                    }
                }
                55 => x.round(),
                56 | 77 | 91 => 1.0 / x.sqrt(),
                57 | 78 | 92 => x.sin(),
                59 => x.sinh(),
                60 => (x * PI).sin(),
                62 | 80 | 94 => x.tan(),
                63 => x.tanh(),
                64 => (x * PI).tan(),
                76 | 90 => 1.0 / x,
                96 => x.to_degrees(),
                100 => x.to_radians(),
                103 => {
                    if x.is_nan() {
                        0.0
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        x
                    }
                }
                _ => <$t>::NAN,
            }
        }
        /// A two-argument function of OpenCL.std, by its number.
        pub extern "C" fn $bin(op: u32, x: $t, y: $t) -> $t {
            const PI: $t = $pi;
            match op {
                7 => x.atan2(y),
                10 => x.atan2(y) / PI,
                24 => {
                    if x > y {
                        x - y
                    } else if x.is_nan() || y.is_nan() {
                        <$t>::NAN
                    } else {
                        0.0
                    }
                }
                29 => x % y,
                32 => x.hypot(y),
                43 => {
                    if x.abs() > y.abs() {
                        x
                    } else if y.abs() > x.abs() {
                        y
                    } else {
                        x.max(y)
                    }
                }
                44 => {
                    if x.abs() < y.abs() {
                        x
                    } else if y.abs() < x.abs() {
                        y
                    } else {
                        x.min(y)
                    }
                }
                48 | 50 | 75 | 89 => x.powf(y),
                51 => {
                    let n = (x / y).round_ties_even();
                    x - n * y
                }
                68 | 82 => x / y,
                101 => {
                    if y < x {
                        0.0
                    } else {
                        1.0
                    }
                }
                _ => <$t>::NAN,
            }
        }
        /// A three-argument function of OpenCL.std, by its number.
        pub extern "C" fn $tern(op: u32, x: $t, y: $t, z: $t) -> $t {
            match op {
                102 => {
                    // smoothstep(edge0, edge1, x)
                    let t = ((z - x) / (y - x)).clamp(0.0, 1.0);
                    t * t * (3.0 - 2.0 * t)
                }
                _ => <$t>::NAN,
            }
        }
    };
}
math!(
    clsync_f32_1,
    clsync_f32_2,
    clsync_f32_3,
    f32,
    std::f32::consts::PI
);
math!(
    clsync_f64_1,
    clsync_f64_2,
    clsync_f64_3,
    f64,
    std::f64::consts::PI
);

/// `pown(x, n)`, `rootn(x, n)` and `ldexp(x, n)` (OpenCL.std 49, 54 and
/// 34) on `double`; `float` goes through it.
pub(crate) extern "C" fn clsync_f64_int(op: u32, x: f64, n: i32) -> f64 {
    match op {
        49 => x.powi(n),
        54 => {
            if n == 0 {
                f64::NAN
            } else if x < 0.0 && n % 2 != 0 {
                -(-x).powf(1.0 / n as f64)
            } else {
                x.powf(1.0 / n as f64)
            }
        }
        34 => x * (2.0f64).powi(n),
        _ => f64::NAN,
    }
}
