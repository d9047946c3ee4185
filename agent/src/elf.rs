//! What gpukb reads from an ELF shared object: its soname, the libraries it
//! needs, its search paths (RPATH/RUNPATH) and the GPU code in `.nv_fatbin`.

use crate::fatbin::{self, FatbinSummary};
use object::elf;
use object::read::elf::{Dyn, FileHeader, SectionHeader};
use object::{Endianness, Object, ObjectSection};
use serde::{Deserialize, Serialize};

/// The parts of an ELF file gpukb reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElfInfo {
    pub soname: Option<String>,
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
    /// `None` when the file carries no GPU code.
    pub fatbin: Option<FatbinSummary>,
    /// The ELF identification the dynamic loader checks (class, machine);
    /// `None` in summaries written before gpukb read it.
    #[serde(default)]
    pub ident: Option<ElfIdent>,
    /// `DT_FLAGS_1` (`DF_1_NODEFLIB` is `0x800`).
    #[serde(default)]
    pub flags_1: u64,
    /// `DT_RPATH` as written, empty elements kept (they mean the current
    /// directory to the loader); `None` when there is none.
    #[serde(default)]
    pub rpath_raw: Option<String>,
    /// `DT_RUNPATH` as written; `None` when there is none.
    #[serde(default)]
    pub runpath_raw: Option<String>,
}

/// What the dynamic loader reads first from a candidate file
/// (glibc elf/dl-load.c `open_verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElfIdent {
    /// `EI_CLASS`: 1 = 32-bit, 2 = 64-bit.
    pub class: u8,
    /// `e_machine` (62 x86-64, 183 AArch64).
    pub machine: u16,
    /// `e_type` (3 = `ET_DYN`).
    pub kind: u16,
}

/// `DF_1_NODEFLIB`: the object was linked with `-z nodefaultlib`.
pub const DF_1_NODEFLIB: u64 = 0x800;

/// Reads the identification of an ELF file from its first 64 bytes; `None`
/// when they are not an ELF header (or the file is shorter than one: the
/// loader's "file too short").
pub fn parse_ident(data: &[u8]) -> Option<ElfIdent> {
    if data.len() < 52 || &data[..4] != b"\x7fELF" {
        return None;
    }
    let rd16 = |o: usize| {
        let b = [data[o], data[o + 1]];
        if data[5] == 2 {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    Some(ElfIdent {
        class: data[4],
        machine: rd16(18),
        kind: rd16(16),
    })
}

/// Parses an ELF image in memory.
pub fn parse_elf(data: &[u8]) -> Result<ElfInfo, String> {
    parse_elf_with(data, |off, len| {
        let d = data
            .get(off as usize..)
            .and_then(|d| d.get(..len))
            .ok_or("the .nv_fatbin section lies outside the file")?;
        Ok(fatbin::parse_fatbin_section(d))
    })
}

/// Parses an ELF file whose headers are in `data` (usually a memory map),
/// walking `.nv_fatbin` with `pread`s on `file` so that only its headers are
/// read, not the hundreds of megabytes of GPU code.
pub fn parse_elf_file(data: &[u8], file: &std::fs::File) -> Result<ElfInfo, String> {
    parse_elf_with(data, |offset, len| {
        Ok(fatbin::walk(&fatbin::FileSection { file, offset, len }))
    })
}

fn parse_elf_with(
    data: &[u8],
    fatbin_at: impl FnOnce(u64, usize) -> Result<Vec<fatbin::FatbinImage>, String>,
) -> Result<ElfInfo, String> {
    let file = object::File::parse(data).map_err(|e| format!("not an ELF file: {e}"))?;
    let fatbin = match file
        .section_by_name(".nv_fatbin")
        .and_then(|s| s.file_range())
    {
        Some((off, size)) => {
            let size = usize::try_from(size).map_err(|_| "the .nv_fatbin section is too large")?;
            Some(fatbin::summarize(&fatbin_at(off, size)?))
        }
        None => None,
    };
    let mut info = match data.get(4) {
        Some(2) => dynamic::<elf::FileHeader64<Endianness>>(data)?,
        Some(1) => dynamic::<elf::FileHeader32<Endianness>>(data)?,
        _ => ElfInfo::default(),
    };
    info.fatbin = fatbin;
    info.ident = parse_ident(data);
    Ok(info)
}

fn dynamic<H: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<ElfInfo, String> {
    let header = H::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let sections = header.sections(endian, data).map_err(|e| e.to_string())?;
    let mut info = ElfInfo::default();
    let Some((_, dynsec)) = sections
        .iter()
        .enumerate()
        .find(|(_, s)| s.sh_type(endian) == elf::SHT_DYNAMIC)
    else {
        return Ok(info);
    };
    let Some(entries) = dynsec.dynamic(endian, data).map_err(|e| e.to_string())? else {
        return Ok(info);
    };
    let strings = sections
        .strings(endian, data, dynsec.link(endian))
        .map_err(|e| e.to_string())?;
    for d in entries.0 {
        let tag = d.tag(endian);
        let string = || -> Option<String> {
            d.string(endian, strings)
                .ok()
                .map(|s| String::from_utf8_lossy(s).into_owned())
        };
        match tag {
            t if t == elf::DT_SONAME => info.soname = string(),
            t if t == elf::DT_NEEDED => info.needed.extend(string()),
            t if t == elf::DT_RPATH => {
                let s = string();
                info.rpath.extend(s.iter().flat_map(|s| split_path(s)));
                info.rpath_raw = s;
            }
            t if t == elf::DT_RUNPATH => {
                let s = string();
                info.runpath.extend(s.iter().flat_map(|s| split_path(s)));
                info.runpath_raw = s;
            }
            t if t == elf::DT_FLAGS_1 => info.flags_1 = d.d_val(endian).into(),
            _ => {}
        }
    }
    Ok(info)
}

fn split_path(s: &str) -> Vec<String> {
    s.split(':')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_elf_is_an_error_not_a_panic() {
        assert!(parse_elf(b"").is_err());
        assert!(parse_elf(b"\x7fELF\x02\x01\x01garbage").is_err());
        assert!(parse_elf(&[0xffu8; 4096]).is_err());
    }
}
