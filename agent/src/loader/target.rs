//! The inputs of the loader model other than files: the target's `ld.so`
//! (default directories, hwcaps subdirectories, `$LIB`, `$PLATFORM`, ELF
//! class and machine, the cache flags it accepts) and the process's
//! environment.

use crate::host::Host;
use std::collections::BTreeSet;

/// `ELFCLASS64`.
pub(super) const CLASS_64: u8 = 2;
/// `EM_X86_64`.
pub(super) const EM_X86_64: u16 = 62;
/// `EM_AARCH64`.
pub(super) const EM_AARCH64: u16 = 183;

/// What the target's loader was built with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// ELF class the loader accepts (`open_verify`: another class is skipped).
    pub class: u8,
    /// ELF machine (`elf_machine_matches_host`: another machine is skipped).
    pub machine: u16,
    /// The cache entries' flags the loader accepts: `_DL_CACHE_DEFAULT_ID`,
    /// 0x303 on x86-64 (sysdeps/unix/sysv/linux/x86_64/dl-cache.h), 0xa03 on
    /// AArch64 (sysdeps/unix/sysv/linux/aarch64/dl-cache.h).
    pub cache_flags: u32,
    /// The legacy hwcap bits of a cache entry the loader accepts (glibc 2.36
    /// elf/dl-cache.c `hwcap_exclude`: the TLS bit 63, and `dl_hwcap`;
    /// ldconfig records an entry under `x86_64/` as bit 1, under `tls/` as bit 63).
    pub cache_hwcap_allowed: u64,
    /// The default search directories, in order (`ld.so --help`, "system
    /// search path"; elf/dl-load.c `_dl_init_paths` from `SYSTEM_DIRS`).
    pub default_dirs: Vec<String>,
    /// The trusted system directories whose cache entries an object linked
    /// with `-z nodefaultlib` may not use (dl-load.c, the `DF_1_NODEFLIB`
    /// test on the cache result): the same list as `default_dirs` on a real
    /// machine; a test may search other default directories.
    pub system_dirs: Vec<String>,
    /// Supported `glibc-hwcaps` subdirectories, best first (glibc ≥ 2.33;
    /// `ld.so --help`: "supported, searched").
    pub hwcaps: Vec<String>,
    /// Legacy hwcaps subdirectories searched under every directory (glibc
    /// < 2.37: `tls`, the platform, hwcap names), best first, without "".
    pub legacy_subdirs: Vec<String>,
    /// `$PLATFORM` (`AT_PLATFORM`: `x86_64`, `aarch64`).
    pub platform: String,
    /// `$LIB` (`DL_DST_LIB`: `lib/x86_64-linux-gnu` on Debian/Ubuntu, `lib64` on Fedora/RHEL).
    pub lib: String,
    /// The loader's own file name (`PT_INTERP`), loaded in every process.
    pub ld_so: String,
}

/// The CPU flags (`/proc/cpuinfo`) each x86-64 ISA level needs, from glibc
/// sysdeps/x86/get-isa-level.h (`osxsave` shows as `xsave`, `lzcnt` as `abm`).
const X86_64_LEVELS: &[(&str, &[&str])] = &[
    (
        "x86-64-v2",
        &[
            "cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3",
        ],
    ),
    (
        "x86-64-v3",
        &[
            "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
        ],
    ),
    (
        "x86-64-v4",
        &["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"],
    ),
];

/// Every subset of `parts`, in the order glibc's `_dl_important_hwcaps`
/// searches them (most specific first; observed with `LD_DEBUG=libs` on
/// glibc 2.36: `tls/x86_64/x86_64`, `tls/x86_64`, `tls/x86_64`, `tls`,
/// `x86_64/x86_64`, `x86_64`, `x86_64`), the empty one left out.
fn subsets(parts: &[&str]) -> Vec<String> {
    let n = parts.len();
    (1..(1u32 << n))
        .rev()
        .map(|mask| {
            (0..n)
                .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                .map(|i| parts[i])
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

impl Target {
    /// The loader of glibc `glibc` (major, minor) on `arch` (`x86_64`,
    /// `aarch64`), with the Debian/Ubuntu multiarch layout when `multiarch`
    /// (else `lib64`), on a CPU with `cpu_flags`.
    pub fn glibc(
        arch: &str,
        glibc: (u32, u32),
        multiarch: bool,
        cpu_flags: &BTreeSet<String>,
    ) -> Target {
        let x86 = arch != "aarch64";
        let triplet = if x86 {
            "x86_64-linux-gnu"
        } else {
            "aarch64-linux-gnu"
        };
        let (default_dirs, lib) = if multiarch {
            (
                vec![
                    format!("/lib/{triplet}"),
                    format!("/usr/lib/{triplet}"),
                    "/lib".into(),
                    "/usr/lib".into(),
                ],
                format!("lib/{triplet}"),
            )
        } else {
            (vec!["/lib64".into(), "/usr/lib64".into()], "lib64".into())
        };
        let mut hwcaps = Vec::new();
        if x86 && glibc >= (2, 33) {
            for (name, flags) in X86_64_LEVELS {
                if flags.iter().all(|f| cpu_flags.contains(*f)) {
                    hwcaps.insert(0, name.to_string());
                } else {
                    break;
                }
            }
        }
        let platform = if x86 { "x86_64" } else { "aarch64" };
        let legacy_subdirs = if glibc < (2, 37) {
            if x86 {
                subsets(&["tls", platform, "x86_64"])
            } else {
                subsets(&["tls", platform])
            }
        } else {
            Vec::new()
        };
        Target {
            class: CLASS_64,
            machine: if x86 { EM_X86_64 } else { EM_AARCH64 },
            cache_flags: if x86 { 0x303 } else { 0xa03 },
            cache_hwcap_allowed: if x86 { (1 << 63) | 0x2 } else { 1 << 63 },
            system_dirs: default_dirs.clone(),
            default_dirs,
            hwcaps,
            legacy_subdirs,
            platform: platform.into(),
            lib,
            ld_so: if x86 {
                "/lib64/ld-linux-x86-64.so.2".into()
            } else {
                "/lib/ld-linux-aarch64.so.1".into()
            },
        }
    }

    /// The target of the machine `host` reads: its architecture from where
    /// its loader is, the multiarch layout from its directories, CPU flags
    /// from `/proc/cpuinfo`, and glibc `glibc`.
    pub fn detect(host: &Host, glibc: (u32, u32)) -> Target {
        let arch = if host.exists("/lib/ld-linux-aarch64.so.1").unwrap_or(false) {
            "aarch64"
        } else {
            "x86_64"
        };
        let triplet = format!("/lib/{arch}-linux-gnu");
        let multiarch = host.exists(&triplet).unwrap_or(false);
        let flags: BTreeSet<String> = host
            .read_string("/proc/cpuinfo")
            .ok()
            .flatten()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("flags"))
                    .map(|l| l.split_whitespace().map(String::from).collect())
            })
            .unwrap_or_default();
        Target::glibc(arch, glibc, multiarch, &flags)
    }

    /// The subdirectories searched under every directory, best first, ""
    /// last (elf/dl-load.c `open_path` loops over `capstr`).
    pub fn subdirs(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .hwcaps
            .iter()
            .map(|h| format!("glibc-hwcaps/{h}/"))
            .collect();
        out.extend(self.legacy_subdirs.iter().map(|s| format!("{s}/")));
        out.push(String::new());
        out
    }
}

/// What the process's environment tells the loader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoaderEnvironment {
    /// `LD_LIBRARY_PATH` (`None`: unset).
    pub ld_library_path: Option<String>,
    /// `LD_PRELOAD` (`None`: unset).
    pub ld_preload: Option<String>,
    /// The contents of `/etc/ld.so.preload` (`None`: no such file).
    pub preload_file: Option<String>,
    /// Secure execution (`AT_SECURE`: setuid/setgid or capabilities):
    /// `LD_LIBRARY_PATH` is ignored, `LD_PRELOAD` paths with `/` are dropped.
    pub secure: bool,
    /// The working directory (empty path elements and relative paths are
    /// resolved against it).
    pub cwd: String,
}

impl LoaderEnvironment {
    /// The environment `host` sees (its registered `LD_*` variables, its
    /// `/etc/ld.so.preload`), not in secure execution, in `cwd`.
    pub fn of(host: &Host, cwd: &str) -> LoaderEnvironment {
        let env = host.env();
        LoaderEnvironment {
            ld_library_path: env.get("LD_LIBRARY_PATH").map(String::from),
            ld_preload: env.get("LD_PRELOAD").map(String::from),
            preload_file: host.read_string("/etc/ld.so.preload").ok().flatten(),
            secure: false,
            cwd: cwd.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_subdirs_are_in_glibc_2_36_order() {
        assert_eq!(
            subsets(&["tls", "x86_64", "x86_64"]),
            [
                "tls/x86_64/x86_64",
                "tls/x86_64",
                "tls/x86_64",
                "tls",
                "x86_64/x86_64",
                "x86_64",
                "x86_64"
            ]
        );
        let flags = ["avx2", "sse4_2"].iter().map(|s| s.to_string()).collect();
        let t = Target::glibc("x86_64", (2, 39), true, &flags);
        assert!(t.hwcaps.is_empty() && t.legacy_subdirs.is_empty());
        assert_eq!(t.subdirs(), [""]);
    }
}
