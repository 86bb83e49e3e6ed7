//! OpenCL C's `printf` (section 6.15.14 of the OpenCL C specification): C99
//! conversions with flags, width, precision and length, plus the vector
//! specifier `%vNx` (`%v4hlf`), components separated by commas.

use std::io::Write;

use super::ctx::{ItemCtx, Slot, OFFSET_BITS, OFFSET_MASK};

/// Reads a NUL-terminated string at a tagged pointer, if valid.
fn c_string(ctx: &ItemCtx, ptr: u64) -> Option<Vec<u8>> {
    let slot = ptr >> OFFSET_BITS;
    let off = (ptr & OFFSET_MASK) as usize;
    if slot == 0 || slot >= ctx.nslots {
        return None;
    }
    // SAFETY: slot < nslots, the table's length.
    let s: Slot = unsafe { *ctx.slots.add(slot as usize) };
    if off as u64 >= s.len {
        return None;
    }
    // SAFETY: [base, base + len) is the object's memory, alive for the
    // launch; reading it as bytes is valid for any contents.
    let bytes = unsafe { std::slice::from_raw_parts(s.base.add(off), s.len as usize - off) };
    let end = bytes.iter().position(|b| *b == 0)?;
    Some(bytes[..end].to_vec())
}

/// One argument: its tag (0 integer, 1 floating, 2 pointer; 4 added for a
/// vector's component) and bits.
#[derive(Clone, Copy)]
struct Arg {
    tag: u64,
    bits: u64,
}

/// A parsed conversion specification.
#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    hash: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    vector: usize,
    length: String,
    conv: u8,
}

fn pad(s: String, spec: &Spec, numeric: bool) -> String {
    let w = spec.width.unwrap_or(0);
    if s.len() >= w {
        return s;
    }
    let fill = w - s.len();
    if spec.minus {
        format!("{s}{}", " ".repeat(fill))
    } else if spec.zero
        && numeric
        && spec.precision.is_none_or(|_| {
            matches!(
                spec.conv,
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A'
            )
        })
    {
        let (sign, rest) = match s.as_bytes().first() {
            Some(b'-' | b'+' | b' ') => s.split_at(1),
            _ => ("", s.as_str()),
        };
        format!("{sign}{}{rest}", "0".repeat(fill))
    } else {
        format!("{}{s}", " ".repeat(fill))
    }
}

fn sign(neg: bool, spec: &Spec) -> &'static str {
    if neg {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

/// `%e` in C's form: at least two exponent digits.
fn exp_form(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{:.*e}", prec, v);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let r = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper {
        r.to_uppercase()
    } else {
        r
    }
}

fn format_float(v: f64, spec: &Spec) -> String {
    let upper = spec.conv.is_ascii_uppercase();
    if v.is_nan() || v.is_infinite() {
        let s = if v.is_nan() { "nan" } else { "inf" };
        let s = format!("{}{}", sign(v.is_sign_negative() && !v.is_nan(), spec), s);
        return if upper { s.to_uppercase() } else { s };
    }
    let neg = v.is_sign_negative();
    let a = v.abs();
    let prec = spec.precision.unwrap_or(6);
    let body = match spec.conv.to_ascii_lowercase() {
        b'f' => format!("{:.*}", prec, a),
        b'e' => exp_form(a, prec, upper),
        b'a' => {
            // Hexadecimal floating point.
            if a == 0.0 {
                "0x0p+0".to_string()
            } else {
                let bits = a.to_bits();
                let e = ((bits >> 52) & 0x7ff) as i64;
                let m = bits & ((1 << 52) - 1);
                let (lead, e) = if e == 0 { (0, -1022) } else { (1, e - 1023) };
                let mut hex = format!("{m:013x}");
                while hex.ends_with('0') {
                    hex.pop();
                }
                let dot = if hex.is_empty() { "" } else { "." };
                let s = format!(
                    "0x{lead}{dot}{hex}p{}{}",
                    if e < 0 { '-' } else { '+' },
                    e.abs()
                );
                if upper {
                    s.to_uppercase()
                } else {
                    s
                }
            }
        }
        _ => {
            // %g: %e or %f by the exponent, trailing zeros removed.
            let p = if prec == 0 { 1 } else { prec };
            let x = if a == 0.0 {
                0
            } else {
                a.log10().floor() as i32
            };
            let e_form = exp_form(a, p - 1, upper);
            let exp: i32 = e_form
                .split(['e', 'E'])
                .nth(1)
                .and_then(|e| e.parse().ok())
                .unwrap_or(x);
            let mut s = if exp < -4 || exp >= p as i32 {
                e_form
            } else {
                format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, a)
            };
            if !spec.hash {
                if let Some(epos) = s.find(['e', 'E']) {
                    let (m, e) = s.split_at(epos);
                    let m = if m.contains('.') {
                        m.trim_end_matches('0').trim_end_matches('.')
                    } else {
                        m
                    };
                    s = format!("{m}{e}");
                } else if s.contains('.') {
                    s = s.trim_end_matches('0').trim_end_matches('.').to_string();
                }
            }
            s
        }
    };
    pad(format!("{}{body}", sign(neg, spec)), spec, true)
}

fn format_int(bits: u64, spec: &Spec) -> String {
    let width_bits = match spec.length.as_str() {
        "hh" => 8,
        "h" => 16,
        "l" | "ll" => 64,
        _ => 32,
    };
    let mask = if width_bits == 64 {
        u64::MAX
    } else {
        (1u64 << width_bits) - 1
    };
    let u = bits & mask;
    let sx = if width_bits == 64 {
        u as i64
    } else {
        ((u << (64 - width_bits)) as i64) >> (64 - width_bits)
    };
    let (neg, digits) = match spec.conv {
        b'd' | b'i' => (sx < 0, sx.unsigned_abs().to_string()),
        b'u' => (false, u.to_string()),
        b'x' => (false, format!("{u:x}")),
        b'X' => (false, format!("{u:X}")),
        b'o' => (false, format!("{u:o}")),
        _ => (false, u.to_string()),
    };
    let mut digits = match spec.precision {
        Some(0) if u == 0 => String::new(),
        Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    };
    if spec.hash && u != 0 {
        match spec.conv {
            b'x' => digits = format!("0x{digits}"),
            b'X' => digits = format!("0X{digits}"),
            b'o' if !digits.starts_with('0') => digits = format!("0{digits}"),
            _ => {}
        }
    }
    let s = if matches!(spec.conv, b'd' | b'i') {
        format!("{}{digits}", sign(neg, spec))
    } else {
        digits
    };
    pad(s, spec, true)
}

/// Formats `fmt` with `args` as OpenCL C's printf does.
fn format(ctx: &ItemCtx, fmt: &[u8], args: &[Arg]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = 0usize;
    let mut i = 0usize;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        let mut spec = Spec::default();
        while let Some(f) = fmt.get(i) {
            match f {
                b'-' => spec.minus = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.hash = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        let num = |i: &mut usize| {
            let s = *i;
            while fmt.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            std::str::from_utf8(&fmt[s..*i])
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
        };
        spec.width = num(&mut i);
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = Some(num(&mut i).unwrap_or(0));
        }
        if fmt.get(i) == Some(&b'v') {
            i += 1;
            spec.vector = num(&mut i).unwrap_or(1);
        }
        while let Some(l) = fmt.get(i) {
            if matches!(l, b'h' | b'l') {
                spec.length.push(*l as char);
                i += 1;
            } else {
                break;
            }
        }
        let Some(conv) = fmt.get(i).copied() else {
            break;
        };
        i += 1;
        spec.conv = conv;
        let count = spec.vector.max(1);
        for k in 0..count {
            if k > 0 {
                out.push(b',');
            }
            let Some(a) = args.get(next).copied() else {
                break;
            };
            next += 1;
            let s = match conv {
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                    let v = if a.tag & 3 == 1 {
                        f64::from_bits(a.bits)
                    } else {
                        a.bits as f64
                    };
                    format_float(v, &spec)
                }
                b'c' => pad(((a.bits as u8) as char).to_string(), &spec, false),
                b's' => {
                    let s = c_string(ctx, a.bits).unwrap_or_else(|| b"(null)".to_vec());
                    let s = String::from_utf8_lossy(&s).into_owned();
                    let s = match spec.precision {
                        Some(p) => s.chars().take(p).collect(),
                        None => s,
                    };
                    pad(s, &spec, false)
                }
                b'p' => pad(format!("{:#x}", a.bits), &spec, false),
                _ => format_int(a.bits, &spec),
            };
            out.extend_from_slice(s.as_bytes());
        }
    }
    out
}

/// `printf`: `args` points at `n` (tag, bits) pairs. Returns 0, or -1
/// when the format string is not a valid string.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_printf(
    ctx: *mut ItemCtx,
    fmt: u64,
    args: u64,
    n: u32,
    _site: u32,
) -> i32 {
    // SAFETY: compiled code passes its own context, alive for the call.
    let ctx = unsafe { &*ctx };
    let Some(f) = c_string(ctx, fmt) else {
        return -1;
    };
    // SAFETY: the code passes the address of a stack slot holding `n`
    // pairs of 64-bit words, alive for the call.
    let words = unsafe { std::slice::from_raw_parts(args as *const u64, 2 * n as usize) };
    let a: Vec<Arg> = words
        .chunks(2)
        .map(|w| Arg {
            tag: w[0],
            bits: w[1],
        })
        .collect();
    let text = format(ctx, &f, &a);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&text);
    let _ = out.flush();
    0
}
