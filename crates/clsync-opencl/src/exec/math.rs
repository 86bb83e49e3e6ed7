//! The math library of compiled code: the OpenCL.std functions that are
//! not a machine instruction, by their OpenCL.std numbers (the
//! `OpenclStd100Op` enum of the `spirv` crate), on Rust's `f32` and `f64`
//! functions (correctly rounded or within a few ULP, inside the bounds of
//! the specification's table of ULP values for the full profile).

macro_rules! math {
    ($un:ident, $bin:ident, $tern:ident, $split:ident, $t:ident, $pi:expr, $next:path) => {
        /// A function of OpenCL.std with a second result, which it stores
        /// through a pointer (by its number): `fract`, `frexp`, `modf`,
        /// `remquo`, `sincos`. The second result goes to `out` (an
        /// integer one as its value).
        ///
        /// # Safety
        ///
        /// `out` is valid for a write of one value (compiled code passes a
        /// stack slot of its own).
        pub unsafe extern "C" fn $split(op: u32, x: $t, y: $t, out: *mut $t) -> $t {
            let (r, o): ($t, $t) = match op {
                30 => {
                    // fract: the largest value below 1 at most.
                    let f = x.floor();
                    if x.is_infinite() {
                        ((0.0 as $t).copysign(x), f)
                    } else {
                        ((x - f).min(1.0 - <$t>::EPSILON / 2.0), f)
                    }
                }
                31 => {
                    // frexp: x = m * 2^e with 0.5 <= |m| < 1.
                    if x == 0.0 || !x.is_finite() {
                        (x, 0.0)
                    } else {
                        let mut e = x.abs().log2().floor() + 1.0;
                        let mut m = x / (2.0 as $t).powf(e);
                        if m.abs() >= 1.0 {
                            m /= 2.0;
                            e += 1.0;
                        } else if m.abs() < 0.5 {
                            m *= 2.0;
                            e -= 1.0;
                        }
                        (m, e)
                    }
                }
                45 => {
                    let t = x.trunc();
                    if x.is_infinite() {
                        ((0.0 as $t).copysign(x), t)
                    } else {
                        (x - t, t)
                    }
                }
                52 => {
                    // remquo: the remainder, and the quotient's sign and
                    // its lowest 7 bits.
                    let n = (x / y).round_ties_even();
                    let q = if n.is_finite() {
                        (n.abs() % 128.0).copysign(n)
                    } else {
                        0.0
                    };
                    (x - n * y, q)
                }
                58 => (x.sin(), x.cos()),
                36 => {
                    // lgamma_r: lgamma, and the sign of gamma.
                    let (l, sign) = libm::lgamma_r(x as f64);
                    (l as $t, sign as $t)
                }
                _ => (<$t>::NAN, <$t>::NAN),
            };
            // SAFETY: our contract.
            unsafe { out.write(o) };
            r
        }

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
                // erfc, erf, lgamma, tgamma: musl's, in double precision
                // (a float's is then within the specification's bounds).
                17 => libm::erfc(x as f64) as $t,
                18 => libm::erf(x as f64) as $t,
                35 => libm::lgamma(x as f64) as $t,
                65 => libm::tgamma(x as f64) as $t,
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
                47 => $next(x, y),
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
    clsync_f32_split,
    f32,
    std::f32::consts::PI,
    libm::nextafterf
);
math!(
    clsync_f64_1,
    clsync_f64_2,
    clsync_f64_3,
    clsync_f64_split,
    f64,
    std::f64::consts::PI,
    libm::nextafter
);

/// `mad_sat(a, b, c)` on 64-bit integers (`signed` nonzero for `long`):
/// the exact `a * b + c`, clamped to the type.
pub(crate) extern "C" fn clsync_mad_sat64(a: u64, b: u64, c: u64, signed: u32) -> u64 {
    if signed != 0 {
        let r = (a as i64 as i128) * (b as i64 as i128) + (c as i64 as i128);
        r.clamp(i64::MIN as i128, i64::MAX as i128) as i64 as u64
    } else {
        let r = (a as u128) * (b as u128) + (c as u128);
        r.min(u64::MAX as u128) as u64
    }
}

/// `ilogb(x)` (OpenCL.std 33) on `double`; `float` goes through it
/// (exactly: every float is a double).
pub(crate) extern "C" fn clsync_ilogb(x: f64) -> i32 {
    libm::ilogb(x)
}

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

/// A `half`'s bits (the low 16 of `bits`) as a float: exact, every half is
/// a float (`vload_half`).
pub(crate) extern "C" fn clsync_half_to_float(bits: u32) -> f32 {
    let h = bits & 0xffff;
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let mant = (h & 0x3ff) as f32;
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        31 if mant == 0.0 => sign * f32::INFINITY,
        31 => f32::from_bits(0x7fc0_0000 | (h & 0x3ff) << 13 | (h & 0x8000) << 16),
        e => sign * (1.0 + mant / 1024.0) * 2f32.powi(e as i32 - 15),
    }
}

/// `x` rounded to a `half` by `mode` (as [`clsync_float_to_half`] takes
/// it), as a float: the result of a half operation computed in float.
pub(crate) extern "C" fn clsync_round_half(x: f32, mode: u32) -> f32 {
    clsync_half_to_float(clsync_float_to_half(f64::from(x), mode))
}

/// `x` as a `half`'s bits, rounded by `mode` (SPIR-V's FPRoundingMode: 0 to
/// nearest even, 1 toward zero, 2 toward +inf, 3 toward -inf), as
/// `vstore_half` and its `_rte`, `_rtz`, `_rtp`, `_rtn` forms store it:
/// an overflow is infinity or the largest half by the mode, a value below
/// the smallest subnormal rounds to it or to zero.
pub(crate) extern "C" fn clsync_float_to_half(x: f64, mode: u32) -> u32 {
    let sign: u32 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Round `a` to a multiple of the half's quantum at its magnitude.
    let e = if a < 2f64.powi(-14) {
        -14
    } else {
        // a's binary exponent, exactly (log2 can be off by one near a power).
        let mut e = a.log2().floor() as i32;
        if 2f64.powi(e) > a {
            e -= 1;
        } else if 2f64.powi(e + 1) <= a {
            e += 1;
        }
        e
    };
    let quantum = 2f64.powi(e - 10);
    let q = a / quantum; // exact: a power of two divides
    let up = match mode {
        1 => false,
        2 => sign == 0 && q.fract() != 0.0,
        3 => sign != 0 && q.fract() != 0.0,
        _ => q.fract() > 0.5 || (q.fract() == 0.5 && q.floor() % 2.0 != 0.0),
    };
    let n = if up { q.floor() + 1.0 } else { q.floor() };
    let v = n * quantum;
    if v > 65504.0 {
        // Past the largest half: infinity when rounding away from zero
        // (nearest, or the mode's direction), else the largest half.
        let to_inf = match mode {
            1 => false,
            2 => sign == 0,
            3 => sign != 0,
            _ => true,
        };
        return sign | if to_inf { 0x7c00 } else { 0x7bff };
    }
    if v < 2f64.powi(-14) {
        return sign | (v / 2f64.powi(-24)) as u32;
    }
    let mut ve = v.log2().floor() as i32;
    if 2f64.powi(ve) > v {
        ve -= 1;
    } else if 2f64.powi(ve + 1) <= v {
        ve += 1;
    }
    let mant = (v / 2f64.powi(ve - 10)) as u32 - 1024;
    sign | ((ve + 15) as u32) << 10 | mant
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Halves against their definitions: every finite half converts to a
    /// float and back to itself in every rounding mode, and values between
    /// two halves round as each mode says.
    #[test]
    fn halves_round_trip_and_round_by_mode() {
        for h in 0..=0xffffu32 {
            let exp = (h >> 10) & 0x1f;
            if exp == 31 {
                continue;
            }
            let f = clsync_half_to_float(h);
            for mode in 0..4 {
                let back = clsync_float_to_half(f as f64, mode);
                // -0.0 and +0.0 keep their signs.
                assert_eq!(back, h, "half {h:#x} as {f} in mode {mode}");
            }
        }
        let one = 0x3c00;
        let next = 0x3c01; // 1 + 2^-10
        let between = 1.0 + 2f64.powi(-11); // halfway: to even (1.0)
        assert_eq!(clsync_float_to_half(between, 0), one);
        assert_eq!(clsync_float_to_half(1.0 + 3.0 * 2f64.powi(-12), 0), next);
        assert_eq!(clsync_float_to_half(between, 1), one);
        assert_eq!(clsync_float_to_half(between, 2), next);
        assert_eq!(clsync_float_to_half(-between, 3), 0x8000 | next);
        assert_eq!(clsync_float_to_half(1e6, 0), 0x7c00);
        assert_eq!(clsync_float_to_half(1e6, 1), 0x7bff);
        assert_eq!(clsync_float_to_half(-1e6, 2), 0xfbff);
        assert_eq!(clsync_float_to_half(1e-9, 2), 1);
        assert_eq!(clsync_float_to_half(1e-9, 0), 0);
        assert!(clsync_half_to_float(0x7e00).is_nan());
        assert_eq!(clsync_half_to_float(0x7c00), f32::INFINITY);
    }
}
