//! Scalars as the 64-bit words that runtime calls take and return: a value
//! of `width` bits (8 to 64) in the low bits of a `u64`.

/// The low `width` bits set.
pub(crate) fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// A signed integer of `width` bits, sign-extended.
pub(crate) fn signed(bits: u64, width: u32) -> i64 {
    let shift = 64 - width.min(64);
    ((bits << shift) as i64) >> shift
}

/// A `float` (`width` 32) or `double` (64), widened to `f64`.
pub(crate) fn float(bits: u64, width: u32) -> f64 {
    if width == 32 {
        f64::from(f32::from_bits(bits as u32))
    } else {
        f64::from_bits(bits)
    }
}

/// The bits of `v` as a `float` (`width` 32) or `double` (64).
pub(crate) fn float_bits(v: f64, width: u32) -> u64 {
    if width == 32 {
        u64::from((v as f32).to_bits())
    } else {
        v.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        assert_eq!(mask(8), 0xff);
        assert_eq!(mask(64), u64::MAX);
        assert_eq!(signed(0xff, 8), -1);
        assert_eq!(signed(0x7f, 8), 127);
        assert_eq!(signed(u64::MAX, 64), -1);
        assert_eq!(float(float_bits(1.5, 32), 32), 1.5);
        assert_eq!(float(float_bits(-0.1, 64), 64), -0.1);
        assert_eq!(float_bits(2.0, 32), u64::from(2.0f32.to_bits()));
    }
}
