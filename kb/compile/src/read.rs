//! Bounded reads of the knowledge base's files: a file larger than its cap is a problem
//! to report, not something to load whole.

use std::io::Read;
use std::path::Path;

/// Largest entry TOML or example text read.
pub(crate) const ENTRY_CAP: u64 = 1 << 20;
/// Largest table (`categories.tsv`, `tables/*.csv`) read.
pub(crate) const TABLE_CAP: u64 = 16 << 20;

/// The file's bytes, or a one-line reason it cannot be read (missing, unreadable, over
/// `cap` bytes).
pub(crate) fn bytes(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut out = Vec::new();
    f.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read: {e}"))?;
    if out.len() as u64 > cap {
        return Err(format!("larger than {} MiB: not read", cap >> 20));
    }
    Ok(out)
}

/// The file as UTF-8 text (see [`bytes`]).
pub(crate) fn text(path: &Path, cap: u64) -> Result<String, String> {
    String::from_utf8(bytes(path, cap)?).map_err(|e| format!("not UTF-8: {e}"))
}
