//! Expectation files and test collection.
//!
//! An expectation file has one `path,0|1` row per test, the path relative
//! to the file's folder (the format of `shared/litmus/expected.csv`,
//! `race-free-expected.csv` and `skip.csv`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A malformed expectation file.
#[derive(Debug, thiserror::Error)]
pub enum ExpectError {
    /// It could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A row is not `path,0` or `path,1`.
    #[error("{path}:{line}: expected `path,0` or `path,1`, found `{text}`")]
    Row {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The row.
        text: String,
    },
}

/// Reads an expectation file: test path (joined to the file's folder) to
/// the expected bit.
pub fn read_expectations(path: &Path) -> Result<BTreeMap<PathBuf, bool>, ExpectError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExpectError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let row = line.trim();
        if row.is_empty() {
            continue;
        }
        let bad = || ExpectError::Row {
            path: path.to_path_buf(),
            line: i + 1,
            text: row.to_string(),
        };
        let (file, bit) = row.rsplit_once(',').ok_or_else(bad)?;
        let bit = match bit.trim() {
            "1" => true,
            "0" => false,
            _ => return Err(bad()),
        };
        out.insert(base.join(file.trim()), bit);
    }
    Ok(out)
}

/// Reads a list of paths (`skip.csv`: one path per row, a trailing
/// `,value` ignored), joined to the file's folder.
pub fn read_list(path: &Path) -> Result<Vec<PathBuf>, ExpectError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExpectError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| base.join(l.split(',').next().unwrap_or(l).trim()))
        .collect())
}

/// Every `.litmus` file under `paths` (files are taken as they are,
/// folders searched recursively), sorted.
pub fn collect(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "litmus") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: no such file or folder", p.display()),
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// The same path with `.` and `..` removed, for comparing expectation rows
/// with collected files.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
