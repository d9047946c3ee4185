//! Checks of the CUDA libraries: what torch and ONNX Runtime need and the loader
//! finds, LD_LIBRARY_PATH shadowing, CUDA_HOME, duplicate versions.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::{framework_key, View};
use crate::{Affects, Evidence, Layer, Severity};
use gpukb_facts::Source;

/// A CUDA library torch's libraries NEED that resolves nowhere (RPATH/RUNPATH,
/// LD_LIBRARY_PATH, ld.so.cache, default dirs): `import torch` fails.
/// KB: `libcudart-cannot-open-shared-object`, `libcudnn-not-installed-or-not-on-path`.
pub(super) const TORCH_LIBRARY_MISSING: Check = Check {
    id: CheckId::TorchLibraryMissing,
    layer: Layer::CudaLibraries,
    category: "missing_runtime_lib",
    explained_by: &[
        CheckId::JetsonTorchWheelMismatch,
        CheckId::JetsonGenericAarch64Wheel,
    ],
    context: false,
    meaning: "a CUDA library torch needs is not found by the loader",
    run: torch_library_missing,
    fix: fixes::torch_library_missing,
};

fn torch_library_missing(v: &View) -> Conclusion {
    let mut out = Vec::new();
    let mut any = false;
    for (e, t) in v.torches() {
        if t.loads.is_empty() {
            continue;
        }
        any = true;
        let missing: Vec<&str> = t
            .loads
            .iter()
            .filter(|l| {
                l.path.is_none() && CUDA_LIB_PREFIXES.iter().any(|p| l.soname.starts_with(p))
            })
            .map(|l| l.soname.as_str())
            .collect();
        if !missing.is_empty() {
            let sev = if v.is_active(e) {
                Severity::Failure
            } else {
                Severity::Warning
            };
            out.push(finding(Some(e.site_packages.clone()), format!("torch {} needs {} and the loader finds no copy", t.version, missing.join(", ")), sev,
                vec![Evidence::new(format!("{} resolve nowhere (RPATH, LD_LIBRARY_PATH, ld.so.cache, default dirs)", missing.join(", ")), &t.source)])
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&["python3 -c 'import torch'", "pip list 2>/dev/null | grep nvidia-"]));
        }
    }
    match (any, out.is_empty()) {
        (false, _) => Conclusion::Undecided("no torch with resolved libraries".into()),
        (true, true) => Conclusion::Clear("every CUDA library torch needs resolves".into()),
        _ => Conclusion::Found(out),
    }
}

/// torch loading a CUDA library through LD_LIBRARY_PATH instead of the nvidia-* wheel it pins
/// (another version): symbol-version errors at import or at first use.
/// KB: `cudnn-version-incompatibility-ld-library-path`, `cublaslt-symbol-version-conflict`.
pub(super) const LIBRARY_SHADOWED_BY_LD_LIBRARY_PATH: Check = Check {
    id: CheckId::LibraryShadowedByLdLibraryPath,
    layer: Layer::CudaLibraries,
    category: "shadowed_cuda_lib",
    explained_by: &[],
    context: false,
    meaning: "torch loads a CUDA library through LD_LIBRARY_PATH, not the copy its wheel pins",
    run: library_shadowed,
    fix: fixes::library_shadowed_by_ld_library_path,
};

/// Libraries the NVIDIA driver installs (`libcuda`, `libnvidia-*`): no wheel pins
/// them, and they are normal from whichever directory the loader finds them in
/// (a container's `/usr/local/nvidia/lib64`, WSL's `/usr/lib/wsl/lib`).
fn is_driver_library(soname: &str) -> bool {
    soname.starts_with("libcuda.so")
        || soname.starts_with("libnvidia-")
        || soname.starts_with("libcudadebugger.so")
}

/// How a library came ahead of the wheel's copy, when it did: the variable and its name.
fn shadowed_through(l: &gpukb_facts::fingerprint::ResolvedLibrary) -> Option<&'static str> {
    use gpukb_facts::fingerprint::LoadRule;
    match l.rule {
        Some(LoadRule::LdLibraryPath) => Some("LD_LIBRARY_PATH"),
        Some(LoadRule::Preload) => Some("LD_PRELOAD"),
        None if l.via.contains("LD_LIBRARY_PATH") => Some("LD_LIBRARY_PATH"),
        _ => None,
    }
}

/// CUDA-numbered libraries (their soname's number is the CUDA major) whose
/// version says which CUDA release they belong to.
fn cuda_numbered(soname: &str) -> bool {
    [
        "libcudart.so",
        "libcublas.so",
        "libcublasLt.so",
        "libnvrtc.so",
        "libnvJitLink.so",
    ]
    .iter()
    .any(|p| soname.starts_with(p))
}

fn major_minor(v: &str) -> Option<(u32, u32)> {
    let mut it = v.split('.');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn library_shadowed(v: &View) -> Conclusion {
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        for l in &t.loads {
            if l.path.is_none() || is_driver_library(&l.soname) {
                continue;
            }
            let Some(var) = shadowed_through(l) else {
                continue;
            };
            let family = l.soname.split(".so").next().unwrap_or("");
            let pinned = e.nvidia_wheels.iter().find(|w| {
                let n = w.name.to_lowercase();
                family
                    .trim_start_matches("lib")
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .next()
                    .is_some_and(|f| !f.is_empty() && n.contains(&f.to_lowercase()))
            });
            let path = l.path.clone().unwrap_or_default();
            let title = match (pinned, &l.version) {
                (Some(w), Some(ver)) if !ver.starts_with(&w.version) && !w.version.starts_with(ver.as_str()) => format!("torch loads {} {ver} from {var} ({path}), not the {} {} wheel it pins", l.soname, w.name, w.version),
                (Some(_), _) => continue,
                // A wheel torch (it depends on nvidia-* wheels) with no wheel for this library
                // installed: whatever LD_LIBRARY_PATH brings is not what it was built with.
                (None, _) if !e.nvidia_wheels.is_empty() => format!("torch loads {} from {var} ({path})", l.soname),
                // A torch built against the system CUDA (no nvidia-* wheels: Jetson's documented
                // LD_LIBRARY_PATH=/usr/local/cuda/lib64, NGC images): normal, unless it is a
                // CUDA-numbered library older than torch's CUDA.
                (None, ver) => match (cuda_numbered(&l.soname), ver.as_deref().and_then(major_minor), t.cuda) {
                    (true, Some(lv), Some(tc)) if lv < (tc.major, tc.minor) => format!("torch {} (CUDA {tc}) loads {} {} from {var} ({path}): older than the CUDA it was built with", t.version, l.soname, ver.as_deref().unwrap_or("")),
                    _ => continue,
                },
            };
            out.push(finding(Some(l.soname.clone()), title.clone(), Severity::Warning, vec![Evidence::new(title, &Source::Env { var: var.into() })])
                .affects(vec![Affects::library(&path), Affects::env(&e.site_packages)])
                .confirm(&[&format!("echo ${var}"), "LD_DEBUG=libs python3 -c 'import torch' 2>&1 | grep -E 'cudnn|cublas|nccl' | head"]));
        }
    }
    if out.is_empty() {
        Conclusion::Clear(
            "no CUDA library torch loads comes from LD_LIBRARY_PATH or LD_PRELOAD against its pin"
                .into(),
        )
    } else {
        Conclusion::Found(out)
    }
}

/// A CUDA library ONNX Runtime's CUDA execution provider NEEDs that the loader finds
/// nowhere: the provider does not load and inference falls back to the CPU.
/// KB: `onnxruntime-cuda-provider-load-failed`.
pub(super) const ONNXRUNTIME_CUDA_LIBRARY_MISSING: Check = Check {
    id: CheckId::OnnxruntimeCudaLibraryMissing,
    layer: Layer::CudaLibraries,
    category: "missing_runtime_lib",
    explained_by: &[],
    context: false,
    meaning: "a CUDA library ONNX Runtime's CUDA execution provider needs is not found by the loader (it falls back to the CPU)",
    run: onnxruntime_cuda_library_missing,
    fix: fixes::onnxruntime_cuda_library_missing,
};

fn onnxruntime_cuda_library_missing(v: &View) -> Conclusion {
    let mut out = Vec::new();
    let mut resolved = 0;
    for (e, fw) in v.frameworks() {
        if fw.framework != "onnxruntime-gpu" || fw.loads.is_empty() {
            continue;
        }
        resolved += 1;
        let missing: Vec<&str> = fw
            .loads
            .iter()
            .filter(|l| {
                l.path.is_none() && CUDA_LIB_PREFIXES.iter().any(|p| l.soname.starts_with(p))
            })
            .map(|l| l.soname.as_str())
            .collect();
        if missing.is_empty() {
            continue;
        }
        // A copy in this env's nvidia-* wheels is off the loader's path but
        // onnxruntime.preload_dlls() (or importing torch first) loads it.
        let in_wheels: Vec<&str> = missing
            .iter()
            .copied()
            .filter(|m| {
                v.fp.libraries.files.iter().any(|f| {
                    f.soname == *m
                        && f.found_via.starts_with("pip ")
                        && f.path.starts_with(&e.site_packages)
                })
            })
            .collect();
        let so = fw.cuda_library.clone().unwrap_or_default();
        let source = Source::Elf { path: so.clone() };
        let (severity, tail) = if in_wheels.len() == missing.len() {
            (
                Severity::Warning,
                " (this env's nvidia-* wheels carry them: only onnxruntime.preload_dlls() or an earlier import torch loads them)",
            )
        } else {
            (
                env_severity(v, e),
                ": its CUDA execution provider does not load and inference runs on the CPU",
            )
        };
        out.push(
            finding(
                Some(framework_key(e, fw)),
                format!(
                    "onnxruntime-gpu {} needs {} and the loader finds no copy{tail}",
                    fw.version,
                    missing.join(", ")
                ),
                severity,
                vec![Evidence::new(
                    format!(
                        "{} NEEDs {}; they resolve nowhere (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default dirs)",
                        so.rsplit('/').next().unwrap_or(&so),
                        missing.join(", ")
                    ),
                    &source,
                )],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "python3 -c 'import onnxruntime as ort; print(ort.get_available_providers())'",
                "ldd $(python3 -c 'import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))')/capi/libonnxruntime_providers_cuda.so | grep 'not found'",
            ]),
        );
    }
    match (resolved, out.is_empty()) {
        (0, _) if v.has_package(&["onnxruntime-gpu"]) => Conclusion::Undecided(
            "onnxruntime-gpu is installed but its CUDA provider's libraries were not read".into(),
        ),
        (0, _) => Conclusion::Undecided("no onnxruntime-gpu in the Python envs read".into()),
        (_, true) => Conclusion::Clear(
            "every CUDA library ONNX Runtime's CUDA provider needs resolves".into(),
        ),
        _ => Conclusion::Found(out),
    }
}

/// CUDA_HOME (or /usr/local/cuda) an older CUDA than torch's: extension builds fail or mix runtimes.
/// KB: `detected-cuda-version-mismatches-torch`.
pub(super) const CUDA_HOME_OLDER_THAN_TORCH: Check = Check {
    id: CheckId::CudaHomeOlderThanTorch,
    layer: Layer::CudaLibraries,
    category: "cuda_home_mismatch",
    explained_by: &[],
    context: false,
    meaning:
        "CUDA_HOME (or /usr/local/cuda) is an older CUDA than torch's (extension builds break)",
    run: cuda_home_older_than_torch,
    fix: fixes::cuda_home_older_than_torch,
};

fn cuda_home_older_than_torch(v: &View) -> Conclusion {
    let home = v
        .env("CUDA_HOME")
        .or_else(|| v.env("CUDA_PATH"))
        .unwrap_or("/usr/local/cuda")
        .trim_end_matches('/');
    let tk = v.fp.libraries.toolkits.iter().find(|t| {
        t.path.trim_end_matches('/') == home
            || t.reached_as.iter().any(|a| a.trim_end_matches('/') == home)
    });
    let Some(tk) = tk else {
        return if v.env("CUDA_HOME").or_else(|| v.env("CUDA_PATH")).is_some() {
            Conclusion::Undecided(format!("{home} is not a CUDA toolkit gpukb found"))
        } else {
            Conclusion::Clear(format!("no CUDA toolkit at {home}"))
        };
    };
    let shown = if tk.path.trim_end_matches('/') == home {
        home.to_string()
    } else {
        format!("{home} (-> {})", tk.path)
    };
    let home = shown.as_str();
    let Some(tv) = tk
        .version
        .value()
        .and_then(|s| s.parse::<gpukb_facts::CudaVersion>().ok())
    else {
        return Conclusion::Undecided(format!("the version of {home} was not observed"));
    };
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        if let Some(tc) = t.cuda {
            if tv.major < tc.major || (tv.major == tc.major && tv < tc) {
                out.push(finding(Some(e.site_packages.clone()), format!("CUDA_HOME {home} is CUDA {tv}; torch {} is CUDA {tc}: building CUDA extensions fails or mixes runtimes", t.version), Severity::Warning,
                    vec![Evidence::new(format!("{home} is CUDA {tv}"), tk.version.source()), Evidence::new(format!("torch built with CUDA {tc}"), &t.source)])
                    .affects(vec![Affects::env(&e.site_packages)])
                    .confirm(&["$CUDA_HOME/bin/nvcc --version", "python3 -c 'import torch; print(torch.version.cuda)'"]));
            }
        }
    }
    if out.is_empty() {
        Conclusion::Clear(format!("{home} (CUDA {tv}) is not older than torch's CUDA"))
    } else {
        Conclusion::Found(out)
    }
}

/// Several versions of one CUDA library installed (informational unless one is loaded
/// against another's symbols).
/// KB: `cublaslt-symbol-version-conflict`, `nccl-library-version-mismatch`.
pub(super) const DUPLICATE_LIBRARY_VERSIONS: Check = Check {
    id: CheckId::DuplicateLibraryVersions,
    layer: Layer::CudaLibraries,
    category: "cudnn_version_mismatch",
    explained_by: &[],
    context: false,
    meaning: "several versions of a CUDA library are installed",
    run: duplicate_library_versions,
    fix: fixes::none,
};

fn duplicate_library_versions(v: &View) -> Conclusion {
    use std::collections::BTreeMap;
    let mut by: BTreeMap<&str, Vec<&gpukb_facts::fingerprint::LibraryFile>> = BTreeMap::new();
    for f in &v.fp.libraries.files {
        if f.version.is_some() {
            by.entry(f.soname.as_str()).or_default().push(f);
        }
    }
    let loaded: Vec<String> = v
        .torches()
        .iter()
        .flat_map(|(_, t)| t.loads.iter().filter_map(|l| l.path.clone()))
        .collect();
    let mut out = Vec::new();
    for (soname, files) in by {
        let mut versions: Vec<&str> = files.iter().filter_map(|f| f.version.as_deref()).collect();
        versions.sort();
        versions.dedup();
        if versions.len() < 2 {
            continue;
        }
        let used: Vec<&&gpukb_facts::fingerprint::LibraryFile> = files
            .iter()
            .filter(|f| loaded.iter().any(|p| p == &f.path || p == &f.real_path))
            .collect();
        let title = match used.first() {
            Some(u) => format!(
                "{soname}: {} installed; torch loads {} ({}), nothing loads the others",
                versions.join(", "),
                u.version.as_deref().unwrap_or("?"),
                u.real_path
            ),
            None => format!("{soname}: {} installed", versions.join(", ")),
        };
        out.push(finding(
            Some(soname.to_string()),
            title.clone(),
            Severity::Info,
            vec![Evidence::new(title, &files[0].source)],
        ));
    }
    if out.is_empty() {
        Conclusion::Clear("one version of each CUDA library".into())
    } else {
        Conclusion::Found(out)
    }
}

const CUDA_LIB_PREFIXES: &[&str] = &[
    "libcud",
    "libcublas",
    "libnccl",
    "libcufft",
    "libcurand",
    "libcusparse",
    "libcusolver",
    "libnvrtc",
    "libnvJitLink",
    "libcufile",
    "libnvshmem",
];
