//! The kernel cache: what the front end made of a source (its SPIR-V, the
//! kernels' parameter names and types, clang's warnings), kept on disk so
//! that building the same source with the same options again skips clang
//! and llvm-spirv, as PoCL's kernel cache does.
//!
//! An entry's key is the SHA-256 of everything the front end's output
//! depends on: the source and the name its messages give it, the build
//! options, the front end itself (this crate's version and the text of
//! `frontend.rs`, so that a change to how clsync drives the tools is a new
//! key), and each tool's identity (the program the `CLSYNC_*` variables
//! name, and the size and modification time of the file it resolves to,
//! so that an upgraded clang is a new key). A source that includes files
//! is keyed by its preprocessed text, which holds what they hold.
//!
//! The folder is `$CLSYNC_CACHE_DIR`, else `$XDG_CACHE_HOME/clsync/kernels`,
//! else `~/.cache/clsync/kernels`; `CLSYNC_KERNEL_CACHE=0` turns the cache
//! off. An entry is written to a temporary file and renamed into place, so
//! a reader sees a whole entry or none; one that does not parse is a miss.
//! The cache never fails a build: an error reading or writing it is a miss.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::frontend::{ArgInfo, Translated};

/// The first line of an entry: the format's version.
const MAGIC: &[u8] = b"clsync kernel cache 1\n";

/// The cache's folder, or none when it is off.
pub fn dir() -> Option<PathBuf> {
    if std::env::var("CLSYNC_KERNEL_CACHE").is_ok_and(|v| v == "0") {
        return None;
    }
    if let Some(d) = std::env::var_os("CLSYNC_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("clsync").join("kernels"))
}

/// The key of a build whose output depends on `parts` (besides the front
/// end and its tools, which every key includes).
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    h.update(MAGIC);
    h.update(env!("CARGO_PKG_VERSION"));
    h.update(include_str!("frontend/mod.rs"));
    h.update(include_str!("frontend/rewrite.rs"));
    for (var, default) in crate::frontend::TOOLS {
        let name = crate::frontend::tool(var, default);
        h.update(name.as_bytes());
        if let Some(meta) = resolve(&name).and_then(|p| std::fs::metadata(p).ok()) {
            h.update(meta.len().to_le_bytes());
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            h.update(mtime.map_or(0, |d| d.as_nanos()).to_le_bytes());
        }
        h.update([0]);
    }
    for p in parts {
        // Each part's length first, so that no two lists of parts hash the
        // same bytes.
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The file a program name runs: itself if it has a folder, else the first
/// in `PATH`.
fn resolve(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

/// The entry of `key`, if the cache has a whole one.
pub fn load(key: &str) -> Option<Translated> {
    let bytes = std::fs::read(dir()?.join(key)).ok()?;
    decode(&bytes)
}

/// Keeps `t` as the entry of `key`; an error is ignored (a later build
/// misses).
pub fn store(key: &str, t: &Translated) {
    let Some(d) = dir() else { return };
    if std::fs::create_dir_all(&d).is_err() {
        return;
    }
    // Unique to this write: two threads may keep the same entry at once.
    // Relaxed: only the number's uniqueness matters; it orders nothing and
    // pairs with nothing.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = d.join(format!("{key}.{}.{n}.tmp", std::process::id()));
    if std::fs::write(&tmp, encode(t)).is_ok() && std::fs::rename(&tmp, d.join(key)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// An entry: the magic line, then length-prefixed fields (the SPIR-V, the
/// log, the 1.x-atomics flag, and per kernel its name and four lists).
fn encode(t: &Translated) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let mut field = |b: &[u8]| {
        out.extend((b.len() as u64).to_le_bytes());
        out.extend(b);
    };
    field(&t.spirv);
    field(t.log.as_bytes());
    field(&[t.legacy_atomics as u8]);
    let mut kernels: Vec<_> = t.args.iter().collect();
    kernels.sort_by(|a, b| a.0.cmp(b.0));
    field(&(kernels.len() as u64).to_le_bytes());
    for (name, a) in kernels {
        field(name.as_bytes());
        for list in [&a.names, &a.type_names, &a.type_quals, &a.access_quals] {
            field(&(list.len() as u64).to_le_bytes());
            for s in list {
                field(s.as_bytes());
            }
        }
    }
    out
}

/// Reads what [`encode`] wrote; none if it is not a whole entry.
fn decode(bytes: &[u8]) -> Option<Translated> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut field = || -> Option<&[u8]> {
        let (len, tail) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if tail.len() < len {
            return None;
        }
        let (f, tail) = tail.split_at(len);
        rest = tail;
        Some(f)
    };
    let count = |f: &[u8]| -> Option<usize> {
        usize::try_from(u64::from_le_bytes(f.try_into().ok()?)).ok()
    };
    let text = |f: &[u8]| String::from_utf8(f.to_vec()).ok();
    let spirv = field()?.to_vec();
    let log = text(field()?)?;
    let legacy_atomics = field()? == [1];
    let kernels = count(field()?)?;
    let mut args = HashMap::new();
    for _ in 0..kernels {
        let name = text(field()?)?;
        let mut lists: [Vec<String>; 4] = Default::default();
        for list in &mut lists {
            let n = count(field()?)?;
            for _ in 0..n {
                list.push(text(field()?)?);
            }
        }
        let [names, type_names, type_quals, access_quals] = lists;
        args.insert(
            name,
            ArgInfo {
                names,
                type_names,
                type_quals,
                access_quals,
            },
        );
    }
    if !rest.is_empty() {
        return None;
    }
    Some(Translated {
        spirv,
        args,
        log,
        legacy_atomics,
        cached: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_as_written_and_a_cut_one_does_not() {
        let mut args = HashMap::new();
        args.insert(
            "k".to_string(),
            ArgInfo {
                names: vec!["out".into(), "n".into()],
                type_names: vec!["uint*".into(), "int".into()],
                type_quals: vec!["restrict".into(), String::new()],
                access_quals: vec!["none".into(), "none".into()],
            },
        );
        let t = Translated {
            spirv: vec![3, 2, 0x23, 7, 1, 2, 3, 4],
            args,
            log: "k.cl:1:1: warning: something\n".into(),
            legacy_atomics: true,
            cached: false,
        };
        let bytes = encode(&t);
        let back = decode(&bytes).expect("a whole entry");
        assert_eq!(back.spirv, t.spirv);
        assert_eq!(back.log, t.log);
        assert!(back.legacy_atomics && back.cached);
        assert_eq!(back.args["k"].names, t.args["k"].names);
        assert_eq!(back.args["k"].type_quals, t.args["k"].type_quals);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
    }

    #[test]
    fn keys_differ_with_each_part_and_with_how_parts_are_split() {
        let a = key(&[b"source", b"-D N=4"]);
        assert_eq!(a, key(&[b"source", b"-D N=4"]));
        assert_ne!(a, key(&[b"source", b"-D N=5"]));
        assert_ne!(a, key(&[b"sourc", b"e-D N=4"]));
        assert_eq!(a.len(), 64);
    }
}
