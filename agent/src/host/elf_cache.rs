//! A cache of ELF summaries (sonames, search paths, the fatbin's SASS/PTX list) for large
//! shared objects such as `libtorch_cuda.so`, so that a command that looks at the machine
//! by default (`gpukb search`) does not walk a gigabyte of GPU code every time. One small
//! JSON file per library under the cache directory, keyed by the file's path, device,
//! inode, size and modification time: a reinstalled or rewritten library gets a new key.
//! A cache file that cannot be read, is too large or does not parse is ignored; writes go
//! through a temporary file and a rename, and failures to write are ignored.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::elf::ElfInfo;

/// Libraries smaller than this are parsed every time (cheaper than the cache file).
pub const MIN_CACHED_SIZE: u64 = 16 << 20;

/// The largest cache file read.
const MAX_ENTRY: u64 = 1 << 20;

/// The cache key of a file: FNV-1a over its identity.
pub fn key(path: &Path, meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    let id = format!(
        "{}\0{}\0{}\0{}\0{}.{}",
        path.display(),
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("elf-v1-{h:016x}.json")
}

/// The cached summary under `dir` for key `k`, when there is a readable one.
#[allow(clippy::disallowed_methods)] // gpukb's own cache, not machine state
pub fn get(dir: &Path, k: &str) -> Option<ElfInfo> {
    let f = std::fs::File::open(dir.join(k)).ok()?;
    let mut bytes = Vec::new();
    f.take(MAX_ENTRY + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_ENTRY {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Stores `info` under `dir` for key `k` (best effort).
#[allow(clippy::disallowed_methods)] // gpukb's own cache, not machine state
pub fn put(dir: &Path, k: &str, info: &ElfInfo) {
    let Ok(json) = serde_json::to_vec(info) else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp: PathBuf = dir.join(format!(".{k}.{}", std::process::id()));
    if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, dir.join(k)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_file_gets_a_new_key_and_a_corrupt_entry_is_ignored() {
        let dir = std::env::temp_dir().join(format!("gpukb-elf-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libx.so");
        std::fs::write(&lib, b"one").unwrap();
        let k1 = key(&lib, &std::fs::metadata(&lib).unwrap());
        let info = ElfInfo {
            soname: Some("libx.so".into()),
            ..ElfInfo::default()
        };
        put(&dir, &k1, &info);
        assert_eq!(get(&dir, &k1), Some(info));
        std::fs::write(&lib, b"two!").unwrap();
        let k2 = key(&lib, &std::fs::metadata(&lib).unwrap());
        assert_ne!(k1, k2);
        assert_eq!(get(&dir, &k2), None);
        std::fs::write(dir.join(&k1), b"{not json").unwrap();
        assert_eq!(get(&dir, &k1), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
