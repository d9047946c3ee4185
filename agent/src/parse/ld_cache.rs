//! `/etc/ld.so.cache`, the dynamic loader's binary cache (what `ldconfig -p`
//! prints), parsed without running ldconfig. Handles the new format
//! (`glibc-ld.so.cache1.1`, glibc ≥ 2.32 writes only this) and the old
//! `ld.so-1.7.0` format with the new table appended (older glibc).

use serde::{Deserialize, Serialize};

const OLD_MAGIC: &[u8] = b"ld.so-1.7.0";
const NEW_MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const NEW_HEADER: usize = 48;
const NEW_ENTRY: usize = 24;

/// One library the loader knows about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The soname, e.g. `libcudart.so.12`.
    pub soname: String,
    /// Where it lives, e.g. `/usr/local/cuda/lib64/libcudart.so.12`.
    pub path: String,
    /// `x86-64`, `AArch64`, `libc6` (32-bit) … as ldconfig prints it.
    pub arch: String,
    /// The entry's flags as stored (`0x303`: ELF libc6, x86-64; the loader
    /// accepts only its own `_DL_CACHE_DEFAULT_ID`).
    #[serde(default)]
    pub flags: u32,
    /// The entry's hwcap word (bit 62: a `glibc-hwcaps` subdirectory entry).
    #[serde(default)]
    pub hwcap: u64,
    /// For a `glibc-hwcaps` entry, the subdirectory name (`x86-64-v3`), read
    /// from the cache's extension section.
    #[serde(default)]
    pub hwcaps: Option<String>,
}

/// `DL_CACHE_HWCAP_EXTENSION` (glibc sysdeps/generic/dl-cache.h).
pub const HWCAP_EXTENSION: u64 = 1 << 62;
/// `DL_CACHE_HWCAP_ISA_LEVEL_MASK`, in the hwcap word's upper half.
const ISA_LEVEL_MASK: u64 = (1 << 10) - 1;
const EXTENSION_MAGIC: u32 = 0xeaa4_2174;

impl CacheEntry {
    /// Whether this is a `glibc-hwcaps` entry (glibc `dl_cache_hwcap_extension`).
    pub fn is_hwcaps(&self) -> bool {
        ((self.hwcap >> 32) & !ISA_LEVEL_MASK) == (HWCAP_EXTENSION >> 32)
    }
}

/// The `glibc-hwcaps` subdirectory names of the extension section (tag 1),
/// indexed as the entries' hwcap words index them.
fn hwcaps_names(hdr: &[u8]) -> Vec<String> {
    let Some(off) = rd32(hdr, 32).map(|o| o as usize).filter(|&o| o != 0) else {
        return Vec::new();
    };
    if rd32(hdr, off) != Some(EXTENSION_MAGIC) {
        return Vec::new();
    }
    let count = rd32(hdr, off + 4).unwrap_or(0) as usize;
    let mut out = Vec::new();
    for i in 0..count.min(64) {
        let s = off + 8 + i * 16;
        let (Some(tag), Some(at), Some(size)) = (rd32(hdr, s), rd32(hdr, s + 8), rd32(hdr, s + 12))
        else {
            break;
        };
        if tag != 1 {
            continue;
        }
        for j in 0..(size as usize / 4).min(4096) {
            let name = rd32(hdr, at as usize + j * 4).and_then(|o| cstr(hdr, o as usize));
            out.push(name.unwrap_or_default());
        }
    }
    out
}

fn rd32(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

fn cstr(b: &[u8], off: usize) -> Option<String> {
    let s = b.get(off..)?;
    let end = s.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&s[..end]).into_owned())
}

fn arch_name(flags: u32) -> String {
    match flags & 0xff00 {
        0x0300 => "x86-64".into(),
        0x0a00 => "AArch64".into(),
        0x0800 => "x32".into(),
        0x0000 if flags & 0xff == 3 => "libc6".into(),
        other => format!("flags {other:#x}"),
    }
}

/// Parses the cache; an unknown or truncated file is an error.
pub fn parse_ld_cache(data: &[u8]) -> Result<Vec<CacheEntry>, String> {
    let new_start = if data.starts_with(NEW_MAGIC) {
        0
    } else if data.starts_with(OLD_MAGIC) {
        let n = rd32(data, 12).ok_or("truncated old-format header")? as usize;
        let end = 16usize
            .checked_add(n.checked_mul(12).ok_or("bad entry count")?)
            .ok_or("bad entry count")?;
        let aligned = (end + 7) & !7;
        if data
            .get(aligned..)
            .is_some_and(|d| d.starts_with(NEW_MAGIC))
        {
            aligned
        } else {
            return Err("old-format ld.so.cache without the new table is not supported".into());
        }
    } else {
        return Err("not an ld.so.cache file (bad magic)".into());
    };
    let hdr = &data[new_start..];
    let n = rd32(hdr, 20).ok_or("truncated header")? as usize;
    if n > hdr.len() / NEW_ENTRY {
        return Err(format!(
            "header claims {n} entries, more than the file holds"
        ));
    }
    let names = hwcaps_names(hdr);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let e = NEW_HEADER + i * NEW_ENTRY;
        let (Some(flags), Some(key), Some(value)) =
            (rd32(hdr, e), rd32(hdr, e + 4), rd32(hdr, e + 8))
        else {
            return Err(format!("entry {i} is truncated"));
        };
        let (Some(soname), Some(path)) = (cstr(hdr, key as usize), cstr(hdr, value as usize))
        else {
            return Err(format!("entry {i} points outside the string table"));
        };
        let hwcap = u64::from(rd32(hdr, e + 16).unwrap_or(0))
            | u64::from(rd32(hdr, e + 20).unwrap_or(0)) << 32;
        let mut entry = CacheEntry {
            soname,
            path,
            arch: arch_name(flags),
            flags,
            hwcap,
            hwcaps: None,
        };
        if entry.is_hwcaps() {
            entry.hwcaps = names.get((hwcap & 0xffff_ffff) as usize).cloned();
        }
        out.push(entry);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error() {
        assert!(parse_ld_cache(b"").is_err());
        assert!(parse_ld_cache(b"glibc-ld.so.cache1.1\xff\xff\xff\xff").is_err());
        let mut t = NEW_MAGIC.to_vec();
        t.extend([0u8; 28]);
        t[20] = 5; // five entries, no room
        assert!(parse_ld_cache(&t).is_err());
    }
}
