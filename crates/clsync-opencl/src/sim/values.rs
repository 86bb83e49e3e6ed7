//! The values of a `.sim` file: element types, parsing and formatting as
//! `oclgrind-kernel` does.

use std::fmt::Write as _;

/// The scalar type of a buffer's elements, for parsing and dumping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `char`.
    I8,
    /// `uchar`.
    U8,
    /// `short`.
    I16,
    /// `ushort`.
    U16,
    /// `int`.
    I32,
    /// `uint`.
    U32,
    /// `long`.
    I64,
    /// `ulong`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl Elem {
    /// By its OpenCL C name (vector widths and pointers stripped).
    pub fn from_name(name: &str) -> Option<Elem> {
        let base = name
            .trim_end_matches('*')
            .trim()
            .trim_start_matches("const ")
            .trim_start_matches("unsigned ")
            .trim_end_matches(|c: char| c.is_ascii_digit());
        let unsigned = name.contains("unsigned ");
        Some(match base {
            "char" if unsigned => Elem::U8,
            "char" => Elem::I8,
            "uchar" | "bool" => Elem::U8,
            "short" if unsigned => Elem::U16,
            "short" => Elem::I16,
            "ushort" | "half" => Elem::U16,
            "int" if unsigned => Elem::U32,
            "int" => Elem::I32,
            "uint" => Elem::U32,
            "long" if unsigned => Elem::U64,
            "long" => Elem::I64,
            "ulong" | "size_t" | "uintptr_t" => Elem::U64,
            "ptrdiff_t" | "intptr_t" => Elem::I64,
            "float" => Elem::F32,
            "double" => Elem::F64,
            _ => return None,
        })
    }

    /// The OpenCL C name, as reports give it.
    pub fn name(self) -> &'static str {
        match self {
            Elem::I8 => "char",
            Elem::U8 => "uchar",
            Elem::I16 => "short",
            Elem::U16 => "ushort",
            Elem::I32 => "int",
            Elem::U32 => "uint",
            Elem::I64 => "long",
            Elem::U64 => "ulong",
            Elem::F32 => "float",
            Elem::F64 => "double",
        }
    }

    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    /// Parses one value (decimal, `0x` hexadecimal, or hexadecimal where
    /// `hex`) into its little-endian bytes.
    pub(super) fn parse(self, text: &str, hex: bool) -> Option<Vec<u8>> {
        let int = |t: &str| -> Option<i128> {
            let (neg, t) = match t.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, t),
            };
            let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                i128::from_str_radix(h, 16).ok()?
            } else if hex {
                i128::from_str_radix(t, 16).ok()?
            } else {
                t.parse::<i128>().ok()?
            };
            Some(if neg { -v } else { v })
        };
        let n = self.size();
        let bytes = match self {
            Elem::F32 | Elem::F64 => self.number_bytes(text.parse::<f64>().ok()?)?,
            _ => self.int_bytes(int(text)?)?,
        };
        Some(bytes[..n].to_vec())
    }

    /// The element of value `v`, as [`parse`](Self::parse) reads the
    /// number's decimal text (an integer element takes `v` truncated), in
    /// the first `size()` of eight bytes: what a `range=` makes, without
    /// the text.
    pub(super) fn number_bytes(self, v: f64) -> Option<[u8; 8]> {
        match self {
            Elem::F32 => {
                let mut w = [0u8; 8];
                w[..4].copy_from_slice(&(v as f32).to_le_bytes());
                Some(w)
            }
            Elem::F64 => Some(v.to_le_bytes()),
            _ => self.int_bytes(v as i64 as i128),
        }
    }

    /// An integer element's bytes, if `v` fits its type (signed or not).
    fn int_bytes(self, v: i128) -> Option<[u8; 8]> {
        let (lo, hi) = match self {
            Elem::I8 => (i8::MIN as i128, u8::MAX as i128),
            Elem::U8 => (i8::MIN as i128, u8::MAX as i128),
            Elem::I16 | Elem::U16 => (i16::MIN as i128, u16::MAX as i128),
            Elem::I32 | Elem::U32 => (i32::MIN as i128, u32::MAX as i128),
            _ => (i64::MIN as i128, u64::MAX as i128),
        };
        (lo..=hi).contains(&v).then(|| (v as u64).to_le_bytes())
    }

    /// Formats element `b` (its little-endian bytes) as `oclgrind-kernel`
    /// dumps it.
    pub fn format(self, b: &[u8], hex: bool) -> String {
        let mut s = String::new();
        self.format_into(b, hex, &mut s);
        s
    }

    /// [`format`](Self::format), appended to `out` (a dump of a million
    /// elements formats each without an allocation).
    pub fn format_into(self, b: &[u8], hex: bool, out: &mut String) {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(w);
        if hex && !matches!(self, Elem::F32 | Elem::F64) {
            let _ = write!(out, "0x{:0width$x}", u, width = 2 * self.size());
            return;
        }
        let signed = |v: i64, out: &mut String| {
            if v < 0 {
                out.push('-');
            }
            push_decimal(out, v.unsigned_abs());
        };
        match self {
            Elem::I8 => signed(u as u8 as i8 as i64, out),
            Elem::U8 => push_decimal(out, u as u8 as u64),
            Elem::I16 => signed(u as u16 as i16 as i64, out),
            Elem::U16 => push_decimal(out, u as u16 as u64),
            Elem::I32 => signed(u as u32 as i32 as i64, out),
            Elem::U32 => push_decimal(out, u as u32 as u64),
            Elem::I64 => signed(u as i64, out),
            Elem::U64 => push_decimal(out, u),
            Elem::F32 => out.push_str(&general(f32::from_bits(u as u32) as f64)),
            Elem::F64 => out.push_str(&general(f64::from_bits(u))),
        }
    }
}

/// Appends `v` in decimal.
pub(super) fn push_decimal(out: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // The bytes are ASCII digits.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// C++ streams' default float format: `%g` with six significant digits.
pub(super) fn general(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let exp = v.abs().log10().floor() as i32;
    let e = format!("{:.5e}", v);
    let (m, ex) = e.split_once('e').unwrap_or((&e, "0"));
    let ex: i32 = ex.parse().unwrap_or(exp);
    if !(-4..6).contains(&ex) {
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        return format!("{m}e{}{:02}", if ex < 0 { '-' } else { '+' }, ex.abs());
    }
    let s = format!("{:.*}", (5 - ex).max(0) as usize, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_format_matches_cpp_streams() {
        for (v, s) in [
            (42.24f64, "42.24"),
            (1.0, "1"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (-3.5, "-3.5"),
            (1.0 / 3.0, "0.333333"),
        ] {
            assert_eq!(general(v), s, "{v}");
        }
    }

    #[test]
    fn values_parse_with_their_type() {
        assert_eq!(
            Elem::I32.parse("-2", false),
            Some((-2i32).to_le_bytes().to_vec())
        );
        assert_eq!(Elem::U8.parse("0x02", true), Some(vec![2]));
        assert_eq!(Elem::U8.parse("300", false), None);
        assert_eq!(
            Elem::F32.parse("1.5", false),
            Some(1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(Elem::from_name("uint4*"), Some(Elem::U32));
        assert_eq!(Elem::from_name("unsigned char*"), Some(Elem::U8));
    }

    /// Integers are dumped as Rust (and C++) print them, extremes too.
    #[test]
    fn integers_format_as_their_decimal_text() {
        for v in [
            0i64,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            i64::MAX,
            i64::MIN,
            1234567890123,
        ] {
            let b = v.to_le_bytes();
            assert_eq!(Elem::I64.format(&b, false), v.to_string());
            assert_eq!(Elem::U64.format(&b, false), (v as u64).to_string());
            assert_eq!(Elem::I32.format(&b[..4], false), (v as i32).to_string());
            assert_eq!(Elem::U32.format(&b[..4], false), (v as u32).to_string());
            assert_eq!(Elem::I16.format(&b[..2], false), (v as i16).to_string());
            assert_eq!(Elem::U8.format(&b[..1], false), (v as u8).to_string());
            assert_eq!(Elem::I8.format(&b[..1], false), (v as i8).to_string());
        }
        assert_eq!(Elem::U16.format(&[0x34, 0x12], true), "0x1234");
    }

    /// A `range=` value is the element its decimal text would parse to
    /// (the way ranges were made before they skipped the text).
    #[test]
    fn numbers_make_the_elements_their_text_parses_to() {
        let elems = [
            Elem::I8,
            Elem::U8,
            Elem::I16,
            Elem::U16,
            Elem::I32,
            Elem::U32,
            Elem::I64,
            Elem::U64,
            Elem::F32,
            Elem::F64,
        ];
        let values = [
            0.0,
            1.0,
            -1.0,
            2.5,
            -2.5,
            127.0,
            128.0,
            255.0,
            256.0,
            -129.0,
            65535.0,
            1e9,
            4294967295.0,
            4294967296.0,
            -2147483649.0,
            1.0 / 3.0,
            1e300,
        ];
        for e in elems {
            for v in values {
                let text = match e {
                    Elem::F32 | Elem::F64 => v.to_string(),
                    _ => (v as i64).to_string(),
                };
                let want = e.parse(&text, false);
                let got = e.number_bytes(v).map(|b| b[..e.size()].to_vec());
                assert_eq!(got, want, "{e:?} {v}");
            }
        }
    }
}
