//! CUDA libraries: every copy of libcudart, libcublas(Lt), libcudnn, libnccl,
//! libnvrtc, libnvJitLink, libcufft, libcusparse, libnvinfer… found through
//! the loader cache, `LD_LIBRARY_PATH` and CUDA toolkits (pip wheels and conda
//! envs are added by the Python collector), with versions and conflicts.

use super::Context;
use crate::fingerprint::{LibraryFacts, LibraryFile, Observed, Source, Toolkit};
use crate::host::{EntryKind, Host};
use crate::parse::system;
use std::collections::{BTreeMap, BTreeSet};

/// Library families gpukb reports, by file-name stem.
pub const FAMILIES: &[&str] = &[
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libnccl",
    "libnvrtc",
    "libnvJitLink",
    "libcufft",
    "libcusparse",
    "libcurand",
    "libcusolver",
    "libnvinfer",
];

/// The family of a library file name: `libcudart.so.12` → `libcudart`.
pub fn family_of(name: &str) -> Option<&'static str> {
    let stem = name.split(".so").next()?;
    FAMILIES.iter().copied().find(|f| *f == stem)
}

/// Whether a file name is a soname (`libx.so.N`), the name the loader asks for.
pub(crate) fn is_soname(name: &str) -> bool {
    name.split_once(".so.")
        .is_some_and(|(_, v)| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// Builds a library record for `path`, resolving symlinks for the version.
pub(crate) fn library_at(
    host: &Host,
    path: &str,
    found_via: &str,
    source: Source,
    known_version: Option<String>,
) -> Option<LibraryFile> {
    let name = path.rsplit('/').next()?;
    let family = family_of(name)?;
    let real = host.canonicalize(path).ok().flatten()?;
    let version = known_version
        .or_else(|| system::version_from_file_name(real.rsplit('/').next().unwrap_or("")));
    Some(LibraryFile {
        family: family.into(),
        soname: name.into(),
        path: path.into(),
        real_path: real,
        version,
        found_via: found_via.into(),
        source,
    })
}

/// Library files in one directory (sonames only).
pub(crate) fn scan_dir(
    host: &Host,
    dir: &str,
    found_via: &str,
    version: Option<&str>,
) -> Result<Vec<LibraryFile>, String> {
    let entries = match host.list(dir) {
        Ok(Some(e)) => e,
        Ok(None) => return Ok(vec![]),
        Err(e) => return Err(e.to_string()),
    };
    Ok(entries
        .iter()
        .filter(|e| e.kind == EntryKind::File && is_soname(&e.name) && family_of(&e.name).is_some())
        .filter_map(|e| {
            let path = format!("{}/{}", dir.trim_end_matches('/'), e.name);
            library_at(
                host,
                &path,
                found_via,
                Source::Listing { path: dir.into() },
                version.map(String::from),
            )
        })
        .collect())
}

pub(super) fn collect(ctx: &Context) -> LibraryFacts {
    let host = &ctx.host;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    match ctx.timed("libraries: ld.so.cache".into(), || ctx.ld_cache()) {
        Ok(Some(entries)) => {
            for e in entries
                .iter()
                .filter(|e| e.arch != "libc6" && family_of(&e.soname).is_some())
            {
                if let Some(f) = library_at(
                    host,
                    &e.path,
                    "ld.so.cache",
                    Source::file("/etc/ld.so.cache"),
                    None,
                ) {
                    files.push(f);
                }
            }
        }
        Ok(None) => problems.push("/etc/ld.so.cache is absent".into()),
        Err(e) => problems.push(e.to_string()),
    }
    if let Some(llp) = host.env().get("LD_LIBRARY_PATH") {
        for d in llp.split(':').filter(|d| !d.is_empty()) {
            match scan_dir(host, d, "LD_LIBRARY_PATH", None) {
                Ok(v) => files.extend(v),
                Err(e) => problems.push(e),
            }
        }
    }
    let toolkits = ctx.timed("libraries: CUDA toolkits".into(), || {
        toolkits(host, &mut files, &mut problems)
    });
    LibraryFacts {
        files: dedupe(files),
        toolkits,
        conflicts: vec![],
        problems,
    }
}

fn toolkits(host: &Host, files: &mut Vec<LibraryFile>, problems: &mut Vec<String>) -> Vec<Toolkit> {
    let mut out: Vec<Toolkit> = Vec::new();
    // `CUDA_HOME`/`CUDA_PATH` first (what torch's cpp_extension and nvcc wrappers
    // use), then every `cuda*` directory under /usr/local and /opt.
    let mut candidates: Vec<(String, bool)> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| host.env().get(v))
        .map(|p| p.trim_end_matches('/').to_string())
        .filter(|p| p.starts_with('/'))
        .map(|p| (p, true))
        .collect();
    for parent in ["/usr/local", "/opt"] {
        let entries = match host.list(parent) {
            Ok(Some(e)) => e,
            Ok(None) => continue,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        candidates.extend(
            entries
                .iter()
                .filter(|e| e.name.starts_with("cuda") && e.kind == EntryKind::Dir)
                .map(|e| (format!("{parent}/{}", e.name), false)),
        );
    }
    for (path, from_env) in candidates {
        {
            let Ok(Some(real)) = host.canonicalize(&path) else {
                continue;
            };
            if let Some(t) = out.iter_mut().find(|t| t.path == real) {
                if path != real && !t.reached_as.contains(&path) {
                    t.reached_as.push(path);
                }
                continue;
            }
            // A variable may name anything: only a directory that looks like a toolkit.
            if from_env
                && !host.exists(&format!("{real}/bin")).unwrap_or(false)
                && !host
                    .exists(&format!("{real}/version.json"))
                    .unwrap_or(false)
                && !host.exists(&format!("{real}/lib64")).unwrap_or(false)
            {
                continue;
            }
            let json = format!("{real}/version.json");
            let txt = format!("{real}/version.txt");
            let version = match host.read_string(&json) {
                Ok(Some(t)) => match gpukb_jetson::parse_cuda_version_json(&t) {
                    Ok(v) => Observed::found(v, Source::file(&json)),
                    Err(e) => Observed::failed(Source::file(&json), e),
                },
                Ok(None) => match host.read_string(&txt) {
                    Ok(Some(t)) => match gpukb_jetson::parse_cuda_version_txt(&t) {
                        Some(v) => Observed::found(v, Source::file(&txt)),
                        None => Observed::failed(Source::file(&txt), "no `CUDA Version` line"),
                    },
                    Ok(None) => match dir_version(&real) {
                        Some(v) => Observed::found(v, Source::Listing { path: real.clone() }),
                        None => {
                            Observed::absent(Source::file(&json), "no version.json or version.txt")
                        }
                    },
                    Err(e) => Observed::failed(Source::file(&txt), e),
                },
                Err(e) => Observed::failed(Source::file(&json), e),
            };
            let nvcc = host.exists(&format!("{real}/bin/nvcc")).unwrap_or(false);
            let via = format!(
                "CUDA toolkit {}",
                version.value().map(String::as_str).unwrap_or(real.as_str())
            );
            for lib in ["lib64", "lib"] {
                if let Ok(v) = scan_dir(host, &format!("{real}/{lib}"), &via, None) {
                    files.extend(v);
                }
            }
            let reached_as = if path == real { vec![] } else { vec![path] };
            out.push(Toolkit {
                path: real,
                version,
                nvcc,
                reached_as,
            });
        }
    }
    out
}

/// `13.0` from a toolkit directory named `cuda-13.0`.
fn dir_version(path: &str) -> Option<String> {
    let v = path.rsplit('/').next()?.strip_prefix("cuda-")?;
    let ok = v
        .split('.')
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && v.contains('.');
    ok.then(|| v.to_string())
}

/// Drops second sightings of the same real file.
pub(crate) fn dedupe(files: Vec<LibraryFile>) -> Vec<LibraryFile> {
    let mut seen = BTreeSet::new();
    files
        .into_iter()
        .filter(|f| seen.insert((f.real_path.clone(), f.soname.clone())))
        .collect()
}

/// Same soname visible with different versions.
pub(crate) fn conflicts(files: &[LibraryFile]) -> Vec<String> {
    let mut by: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for f in files {
        if let Some(v) = f.version.as_deref() {
            by.entry(f.soname.as_str())
                .or_default()
                .entry(v)
                .or_default()
                .push(f.found_via.as_str());
        }
    }
    by.into_iter()
        .filter(|(_, vs)| vs.len() > 1)
        .map(|(soname, vs)| {
            let parts: Vec<String> = vs
                .iter()
                .map(|(v, via)| format!("{v} ({})", via.join(", ")))
                .collect();
            format!("{soname}: {}", parts.join(" vs "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(family_of("libcudart.so.12"), Some("libcudart"));
        assert_eq!(family_of("libcublasLt.so.13"), Some("libcublasLt"));
        assert_eq!(family_of("libcudnn_ops.so.9"), None);
        assert!(is_soname("libcudnn.so.9"));
        assert!(!is_soname("libcudnn.so.9.14.0"));
        assert!(!is_soname("libcudnn.so"));
    }
}
