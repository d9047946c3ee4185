//! NVIDIA fatbinary parsing: lists the SASS (cubin) and PTX images inside an
//! ELF's `.nv_fatbin` section without cuobjdump and without decompressing.
//!
//! Layout (little-endian): a section holds concatenated containers
//! `{u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 fat_size}`; each
//! container holds entries `{u16 kind, u16, u32 header_size, u64
//! payload_size, u32 compressed_size, u32, u16 minor, u16 major, u32 arch,
//! ..., u64 flags @0x28}`. Kind 1 is PTX, 2 is an ELF cubin. Flag 0x100000
//! marks an arch-specific `a` target, 0x200000 a family `f` target.

const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
const FLAG_FAMILY: u64 = 0x20_0000;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;

pub use gpukb_facts::target::{
    summarize, ArchVariant, FatbinImage, FatbinSummary, FatbinTarget, ImageKind,
};

fn rd16(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn rd32(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn rd64(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// Random access to the bytes of a `.nv_fatbin` section: a slice in memory,
/// or a file read with `pread` so that walking a 300 MB section touches only
/// the few kilobytes of headers (an mmap would fault whole pages in).
pub trait SectionBytes {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from `offset`; false when out of range or unreadable.
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> bool;
}

impl SectionBytes for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> bool {
        match offset
            .checked_add(buf.len())
            .and_then(|end| self.get(offset..end))
        {
            Some(src) => {
                buf.copy_from_slice(src);
                true
            }
            None => false,
        }
    }
}

/// A section inside an open file.
pub struct FileSection<'a> {
    pub file: &'a std::fs::File,
    pub offset: u64,
    pub len: usize,
}

impl SectionBytes for FileSection<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> bool {
        use std::os::unix::fs::FileExt;
        if offset
            .checked_add(buf.len())
            .is_none_or(|end| end > self.len)
        {
            return false;
        }
        self.file
            .read_exact_at(buf, self.offset + offset as u64)
            .is_ok()
    }
}

/// Lists every image header in a `.nv_fatbin` section (or a standalone
/// `.fatbin` file). Garbage yields fewer images, never a panic.
pub fn parse_fatbin_section(sec: &[u8]) -> Vec<FatbinImage> {
    walk(sec)
}

/// Like [`parse_fatbin_section`], over any [`SectionBytes`].
pub fn walk<S: SectionBytes + ?Sized>(sec: &S) -> Vec<FatbinImage> {
    let mut out = Vec::new();
    let len = sec.len();
    let mut pos = 0usize;
    let mut h = [0u8; 16];
    let mut eh_buf = [0u8; 64];
    while pos + 16 <= len {
        if !sec.read_at(pos, &mut h) {
            break;
        }
        if rd32(&h, 0) != Some(CONTAINER_MAGIC) {
            pos += 8;
            continue;
        }
        let header = rd16(&h, 6).unwrap_or(16) as usize;
        let fat = rd64(&h, 8).unwrap_or(0);
        let end = usize::try_from(fat)
            .ok()
            .and_then(|f| pos.checked_add(header)?.checked_add(f))
            .unwrap_or(usize::MAX)
            .min(len);
        let mut e = pos + header.max(16);
        while e + 64 <= end {
            if !sec.read_at(e, &mut eh_buf) {
                break;
            }
            let b = &eh_buf;
            let (Some(kind), Some(eh), Some(payload)) = (rd16(b, 0), rd32(b, 4), rd64(b, 8)) else {
                break;
            };
            let eh = eh as usize;
            if eh < 64 {
                break;
            }
            let minor = rd16(b, 0x18).unwrap_or(0);
            let major = rd16(b, 0x1A).unwrap_or(0);
            let arch = rd32(b, 0x1C).unwrap_or(0);
            let flags = rd64(b, 0x28).unwrap_or(0);
            let csize = rd32(b, 0x10).unwrap_or(0);
            let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
                ArchVariant::A
            } else if flags & FLAG_FAMILY != 0 {
                ArchVariant::F
            } else {
                ArchVariant::Plain
            };
            out.push(FatbinImage {
                kind: match kind {
                    1 => ImageKind::Ptx,
                    2 => ImageKind::Sass,
                    k => ImageKind::Other(k),
                },
                arch,
                variant,
                version: (major, minor),
                compressed: csize != 0 || flags & (FLAG_LZ4 | FLAG_ZSTD) != 0,
            });
            let Some(next) = usize::try_from(payload)
                .ok()
                .and_then(|p| e.checked_add(eh)?.checked_add(p))
            else {
                break;
            };
            if next <= e {
                break;
            }
            e = next;
        }
        // Containers are 8-byte aligned; never step backwards.
        pos = if end > pos { (end + 7) & !7 } else { pos + 8 };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: u16, arch: u32, flags: u64, payload: &[u8]) -> Vec<u8> {
        let mut e = vec![0u8; 64];
        e[0..2].copy_from_slice(&kind.to_le_bytes());
        e[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        e[4..8].copy_from_slice(&64u32.to_le_bytes());
        e[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        e[0x18..0x1A].copy_from_slice(&0u16.to_le_bytes());
        e[0x1A..0x1C].copy_from_slice(&9u16.to_le_bytes());
        e[0x1C..0x20].copy_from_slice(&arch.to_le_bytes());
        e[0x28..0x30].copy_from_slice(&flags.to_le_bytes());
        e.extend_from_slice(payload);
        e
    }

    fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut c = Vec::new();
        c.extend_from_slice(&CONTAINER_MAGIC.to_le_bytes());
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(body.len() as u64).to_le_bytes());
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn lists_sass_ptx_and_variants() {
        let mut sec = container(&[
            entry(2, 80, 0x11, &[0; 8]),
            entry(2, 90, 0x10_0011, &[0; 16]),
        ]);
        sec.extend(container(&[
            entry(1, 80, 0x2011, &[0; 8]),
            entry(2, 100, 0x20_0011, &[0; 8]),
        ]));
        let s = summarize(&parse_fatbin_section(&sec));
        assert_eq!(s.sass, vec!["sm_80", "sm_90a", "sm_100f"]);
        assert_eq!(s.ptx, vec!["compute_80"]);
        assert_eq!(s.images, 4);
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // writes a temporary file
    fn reading_from_a_file_matches_reading_from_memory() {
        let mut sec = vec![0u8; 24];
        sec.extend(container(&[
            entry(2, 86, 0x11, &[7; 40]),
            entry(1, 90, 0x11, &[1; 8]),
        ]));
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        let mut file_bytes = vec![0xAB; 100];
        file_bytes.extend(&sec);
        std::fs::write(&p, &file_bytes).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let from_file = walk(&FileSection {
            file: &f,
            offset: 100,
            len: sec.len(),
        });
        assert_eq!(from_file, parse_fatbin_section(&sec));
        assert_eq!(summarize(&from_file).sass, vec!["sm_86"]);
    }

    #[test]
    fn garbage_and_truncation_never_panic() {
        let sec = container(&[entry(2, 80, 0, &[0; 8])]);
        for cut in 0..sec.len() {
            let _ = parse_fatbin_section(&sec[..cut]);
        }
        let mut bad = sec.clone();
        bad[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let _ = parse_fatbin_section(&bad);
        let junk: Vec<u8> = (0..10_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let _ = parse_fatbin_section(&junk);
    }
}
