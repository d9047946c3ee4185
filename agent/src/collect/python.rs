//! Python environments read without running Python: where site-packages
//! directories are (venvs, conda, system, user), the PyTorch in each
//! (`torch/version.py`, METADATA pins, the GPU code in `libtorch_cuda.so`,
//! which CUDA libraries it would load), `nvidia-*` wheels, other
//! CUDA-carrying packages, and the CUDA builds of JAX, CuPy, TensorFlow,
//! ONNX Runtime and TensorRT.

use super::libraries::{family_of, scan_dir};
use super::Context;
use crate::fingerprint::{
    CudaExtension, FrameworkBuild, FrameworkCuda, LibraryFile, Observed, Package, PythonEnv,
    PythonEnvKind, ResolvedLibrary, Source, TorchInstall,
};
use crate::host::{EntryKind, Host};
use crate::loader;
use crate::parse::ld_cache::CacheEntry;
use crate::parse::python as p;
use crate::parse::system;
use std::collections::BTreeSet;

/// Packages that carry CUDA code of their own.
const CUDA_PACKAGES: &[&str] = &[
    "torchvision",
    "torchaudio",
    "vllm",
    "xformers",
    "flash-attn",
    "bitsandbytes",
    "triton",
    "jax",
    "jaxlib",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "tensorflow",
    "onnxruntime-gpu",
    "tensorrt",
    "tensorrt-cu12",
    "tensorrt-cu13",
    "cupy-cuda11x",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "mmcv",
    "deepspeed",
];

fn list_names(host: &Host, dir: &str, kind: EntryKind) -> Vec<String> {
    match host.list(dir) {
        Ok(Some(v)) => v
            .into_iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.name)
            .collect(),
        _ => vec![],
    }
}

/// Candidate environment prefixes, in a documented order: the active venv
/// and conda env, interpreters on `PATH`, conda installs, per-user tools,
/// `/opt/*` venvs, then the system Pythons.
fn prefixes(host: &Host) -> Vec<(PythonEnvKind, String)> {
    let env = host.env();
    let mut out: Vec<(PythonEnvKind, String)> = Vec::new();
    let mut push = |kind: PythonEnvKind, p: String| out.push((kind, p));
    if let Some(v) = env.get("VIRTUAL_ENV") {
        push(PythonEnvKind::Venv, v.to_string());
    }
    if let Some(v) = env.get("CONDA_PREFIX") {
        push(PythonEnvKind::Conda, v.to_string());
    }
    for d in env.path_dirs() {
        if let Some(parent) = d.strip_suffix("/bin") {
            if host
                .exists(&format!("{parent}/pyvenv.cfg"))
                .unwrap_or(false)
            {
                push(PythonEnvKind::Venv, parent.to_string());
            } else if host
                .exists(&format!("{parent}/conda-meta"))
                .unwrap_or(false)
            {
                push(PythonEnvKind::Conda, parent.to_string());
            }
        }
    }
    let mut homes: Vec<String> = vec!["/root".into()];
    homes.extend(
        list_names(host, "/home", EntryKind::Dir)
            .into_iter()
            .map(|n| format!("/home/{n}")),
    );
    if let Some(h) = env.get("HOME") {
        homes.insert(0, h.to_string());
    }
    let mut conda_roots = vec![
        "/opt/conda".to_string(),
        "/opt/miniconda3".into(),
        "/opt/miniforge3".into(),
    ];
    for h in &homes {
        for c in [
            "miniconda3",
            "anaconda3",
            "miniforge3",
            "mambaforge",
            ".conda",
        ] {
            conda_roots.push(format!("{h}/{c}"));
        }
    }
    for c in &conda_roots {
        if host.exists(&format!("{c}/conda-meta")).unwrap_or(false) {
            push(PythonEnvKind::Conda, c.clone());
        }
        for e in list_names(host, &format!("{c}/envs"), EntryKind::Dir) {
            push(PythonEnvKind::Conda, format!("{c}/envs/{e}"));
        }
    }
    for h in &homes {
        push(PythonEnvKind::User, format!("{h}/.local"));
        for d in [
            ".pyenv/versions",
            ".virtualenvs",
            ".local/share/pipx/venvs",
            ".cache/pypoetry/virtualenvs",
        ] {
            for e in list_names(host, &format!("{h}/{d}"), EntryKind::Dir) {
                push(PythonEnvKind::Venv, format!("{h}/{d}/{e}"));
            }
        }
        for v in [".venv", "venv"] {
            push(PythonEnvKind::Venv, format!("{h}/{v}"));
        }
    }
    for o in list_names(host, "/opt", EntryKind::Dir) {
        for v in ["", "/.venv", "/venv"] {
            push(PythonEnvKind::Venv, format!("/opt/{o}{v}"));
        }
    }
    push(PythonEnvKind::System, "/usr/local".into());
    push(PythonEnvKind::System, "/usr".into());
    out
}

/// The site-packages directories of a prefix.
fn site_dirs(host: &Host, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for py in list_names(host, &format!("{prefix}/lib"), EntryKind::Dir) {
        if !py.starts_with("python3") {
            continue;
        }
        for sub in ["site-packages", "dist-packages"] {
            let d = format!("{prefix}/lib/{py}/{sub}");
            if host.exists(&d).unwrap_or(false) {
                out.push(d);
            }
        }
    }
    if prefix == "/usr"
        && host
            .exists("/usr/lib/python3/dist-packages")
            .unwrap_or(false)
    {
        out.push("/usr/lib/python3/dist-packages".into());
    }
    out
}

fn python_of(site: &str) -> Option<String> {
    site.split('/')
        .find_map(|c| c.strip_prefix("python"))
        .filter(|v| v.starts_with('3') && v.len() > 1)
        .map(String::from)
}

pub(super) fn collect(ctx: &Context) -> (Vec<PythonEnv>, Vec<LibraryFile>) {
    let host = &ctx.host;
    let mut seen = BTreeSet::new();
    let mut envs = Vec::new();
    let mut libs = Vec::new();
    let prefixes = ctx.timed("python: candidate prefixes".into(), || prefixes(host));
    for (kind, prefix) in prefixes {
        if !host.exists(&prefix).unwrap_or(false) {
            continue;
        }
        for site in site_dirs(host, &prefix) {
            let Ok(Some(real)) = host.canonicalize(&site) else {
                continue;
            };
            if !seen.insert(real) {
                continue;
            }
            if let Some(env) = ctx.timed(format!("python: {site}"), || {
                scan_site(ctx, kind, &site, &mut libs)
            }) {
                envs.push(env);
            }
        }
        if kind == PythonEnvKind::Conda {
            let via = format!("conda env {prefix}");
            if let Ok(v) = scan_dir(host, &format!("{prefix}/lib"), &via, None) {
                libs.extend(v);
            }
        }
    }
    (envs, libs)
}

/// The wheel that owns a library inside `site/nvidia/<dir>/lib`.
fn owning_wheel<'a>(wheels: &'a [Package], dir: &str, family: &str) -> Option<&'a Package> {
    let key = match (dir, family) {
        (_, "libcudart") => "nvidia-cuda-runtime",
        (_, "libnvrtc") => "nvidia-cuda-nvrtc",
        (_, "libcublas" | "libcublasLt") => "nvidia-cublas",
        (_, "libnvJitLink") => "nvidia-nvjitlink",
        (_, "libcudnn") => "nvidia-cudnn",
        (_, "libnccl") => "nvidia-nccl",
        (_, "libcufft") => "nvidia-cufft",
        (_, "libcusparse") => "nvidia-cusparse",
        (_, "libcurand") => "nvidia-curand",
        (_, "libcusolver") => "nvidia-cusolver",
        _ => return None,
    };
    wheels
        .iter()
        .filter(|w| w.name == key || w.name.starts_with(&format!("{key}-cu")))
        // Prefer a real wheel over the 0.0.1 `-cu13` placeholder packages.
        .max_by_key(|w| !w.version.starts_with("0.0."))
}

/// cuDNN/NCCL wheels carry a 4th build number: 9.19.0.56 → 9.19.0.
fn library_version(family: &str, wheel_version: &str) -> String {
    if matches!(family, "libcudnn" | "libnccl") {
        wheel_version
            .split('.')
            .take(3)
            .collect::<Vec<_>>()
            .join(".")
    } else {
        wheel_version.to_string()
    }
}

fn scan_site(
    ctx: &Context,
    kind: PythonEnvKind,
    site: &str,
    libs: &mut Vec<LibraryFile>,
) -> Option<PythonEnv> {
    let host = &ctx.host;
    let entries = host.list(site).ok().flatten()?;
    let mut dists: Vec<Package> = entries
        .iter()
        .filter_map(|e| e.name.strip_suffix(".dist-info"))
        .filter_map(|n| n.split_once('-'))
        .map(|(n, v)| Package {
            name: p::normalize_name(n),
            version: v.to_string(),
        })
        .collect();
    dists.sort_by(|a, b| a.name.cmp(&b.name));
    let nvidia_wheels: Vec<Package> = dists
        .iter()
        .filter(|d| d.name.starts_with("nvidia-"))
        .cloned()
        .collect();
    let cuda_packages: Vec<Package> = dists
        .iter()
        .filter(|d| CUDA_PACKAGES.contains(&d.name.as_str()))
        .cloned()
        .collect();
    let has_torch = entries
        .iter()
        .any(|e| e.name == "torch" && e.kind == EntryKind::Dir);
    let has_framework = dists.iter().any(|d| {
        p::cuda_of_distribution(&d.name).is_some()
            || matches!(
                d.name.as_str(),
                "tensorflow" | "tensorflow-cpu" | "tensorflow-gpu" | "tf-nightly"
            )
    });
    if !has_torch && nvidia_wheels.is_empty() && cuda_packages.is_empty() && !has_framework {
        return None;
    }
    // What `import torch` loads is modelled on its own thread, started first: it is the
    // longest step of the detection, and it needs none of the reads below (only the
    // wheel libraries, to name the loaded files' wheels, once both are done).
    std::thread::scope(|scope| {
        let process = has_torch.then(|| {
            scope.spawn(|| {
                ctx.timed(
                    format!("python: {site}: torch: what import torch loads"),
                    || torch_process(ctx, site),
                )
            })
        });
        let process = move || process.and_then(|h| h.join().ok()).flatten();
        let found = Site {
            kind,
            site,
            entries: &entries,
            dists,
            nvidia_wheels,
            cuda_packages,
            has_torch,
        };
        scan_site_with(ctx, found, libs, process)
    })
}

/// What [`scan_site`] read of one site-packages before looking inside its packages.
struct Site<'a> {
    kind: PythonEnvKind,
    site: &'a str,
    entries: &'a [crate::host::DirEntry],
    dists: Vec<Package>,
    nvidia_wheels: Vec<Package>,
    cuda_packages: Vec<Package>,
    has_torch: bool,
}

/// The rest of [`scan_site`], with `process` giving the loader model's `import torch`
/// (`None` when it could not be modelled).
fn scan_site_with<'h>(
    ctx: &'h Context,
    found: Site<'_>,
    libs: &mut Vec<LibraryFile>,
    process: impl FnOnce() -> Option<loader::Process<'h, Host>>,
) -> Option<PythonEnv> {
    let Site {
        kind,
        site,
        entries,
        dists,
        nvidia_wheels,
        cuda_packages,
        has_torch,
    } = found;
    let host = &ctx.host;
    // Libraries shipped in nvidia-* wheels.
    let wheel_libs = ctx.timed(format!("python: {site}: nvidia wheel libraries"), || {
        let mut wheel_libs = Vec::new();
        for sub in list_names(host, &format!("{site}/nvidia"), EntryKind::Dir) {
            let dir = format!("{site}/nvidia/{sub}/lib");
            if let Ok(found) = scan_dir(host, &dir, "pip wheel", None) {
                for mut f in found {
                    if let Some(w) = owning_wheel(&nvidia_wheels, &sub, &f.family) {
                        f.version = Some(library_version(&f.family, &w.version));
                        f.found_via = format!("pip {} {}", w.name, w.version);
                    }
                    wheel_libs.push(f);
                }
            }
        }
        wheel_libs
    });
    let torch = ctx.timed(format!("python: {site}: torch"), || {
        has_torch
            .then(|| torch(ctx, site, &dists, &wheel_libs, process))
            .flatten()
    });
    let extensions = ctx.timed(format!("python: {site}: extensions"), || {
        extensions(host, site, entries, &cuda_packages)
    });
    let frameworks = ctx.timed(format!("python: {site}: other frameworks"), || {
        frameworks(ctx, site, &dists, &wheel_libs)
    });
    libs.extend(wheel_libs);
    Some(PythonEnv {
        site_packages: site.to_string(),
        kind,
        python: python_of(site),
        torch,
        nvidia_wheels,
        cuda_packages,
        extensions,
        frameworks,
    })
}

/// The CUDA builds of the frameworks other than torch in one site-packages.
fn frameworks(
    ctx: &Context,
    site: &str,
    dists: &[Package],
    wheel_libs: &[LibraryFile],
) -> Vec<FrameworkBuild> {
    let listing = Source::Listing {
        path: site.to_string(),
    };
    let version_of = |name: &str| {
        dists
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.version.clone())
    };
    let mut out = Vec::new();
    for d in dists {
        let Some(named) = p::cuda_of_distribution(&d.name) else {
            continue;
        };
        let cuda = Observed::found(
            FrameworkCuda {
                major: named.major,
                minor: named.minor,
                cudnn_major: None,
                read_from: format!("distribution name {}", d.name),
            },
            listing.clone(),
        );
        let same_release = if named.framework == "jax" {
            // jaxlib uses a plugin only when both are one release
            // (jaxlib/plugin_support.py); the plugin pins its pjrt.
            let pjrt = format!("jax-cuda{}-pjrt", named.major);
            ["jaxlib", d.name.as_str(), pjrt.as_str()]
                .iter()
                .filter_map(|n| {
                    version_of(n).map(|version| Package {
                        name: n.to_string(),
                        version,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        out.push(FrameworkBuild {
            framework: named.framework.to_string(),
            distribution: d.name.clone(),
            version: d.version.clone(),
            cuda,
            same_release,
            cuda_library: None,
            loads: Vec::new(),
        });
    }
    for name in [
        "tensorflow",
        "tensorflow-cpu",
        "tensorflow-gpu",
        "tf-nightly",
    ] {
        if let Some(version) = version_of(name) {
            out.push(tensorflow(&ctx.host, site, name, version));
        }
    }
    if let Some(version) = version_of("onnxruntime-gpu") {
        out.push(onnxruntime_gpu(ctx, site, version, wheel_libs));
    }
    out
}

/// TensorFlow's CUDA build from its generated `build_info.py`.
fn tensorflow(host: &Host, site: &str, name: &str, version: String) -> FrameworkBuild {
    let path = format!("{site}/tensorflow/python/platform/build_info.py");
    let source = Source::file(path.clone());
    let cuda = match host.read_string(&path) {
        Ok(Some(text)) => match p::parse_tf_build_info(&text) {
            None => Observed::failed(source, "build_info.py has no is_cuda_build entry"),
            Some(b) if !b.is_cuda_build => {
                Observed::absent(source, "a CPU build (is_cuda_build is False)")
            }
            Some(b) => match b.cuda_version.as_deref().map(release_pair) {
                Some(Some((major, minor))) => Observed::found(
                    FrameworkCuda {
                        major,
                        minor,
                        cudnn_major: b
                            .cudnn_version
                            .as_deref()
                            .and_then(|c| gpukb_facts::compat::release_numbers(c).first().copied()),
                        read_from: format!(
                            "cuda_version '{}' in build_info.py",
                            b.cuda_version.clone().unwrap_or_default()
                        ),
                    },
                    source,
                ),
                _ => Observed::failed(source, "build_info.py names no readable cuda_version"),
            },
        },
        Ok(None) => Observed::absent(
            source,
            "tensorflow/python/platform/build_info.py is missing",
        ),
        Err(e) => super::observed_error(source, e),
    };
    FrameworkBuild {
        framework: "tensorflow".into(),
        distribution: name.into(),
        version,
        cuda,
        same_release: Vec::new(),
        cuda_library: None,
        loads: Vec::new(),
    }
}

/// `12.5.1` → (12, Some(5)); `12` → (12, None).
fn release_pair(v: &str) -> Option<(u32, Option<u32>)> {
    let n = gpukb_facts::compat::release_numbers(v);
    Some((*n.first()?, n.get(1).copied()))
}

/// ONNX Runtime's CUDA execution provider: the CUDA and cuDNN majors its
/// `NEEDED` sonames name, and where each resolves.
fn onnxruntime_gpu(
    ctx: &Context,
    site: &str,
    version: String,
    wheel_libs: &[LibraryFile],
) -> FrameworkBuild {
    let dir = format!("{site}/onnxruntime/capi");
    let so = format!("{dir}/libonnxruntime_providers_cuda.so");
    let source = Source::Elf { path: so.clone() };
    let (cuda, loads) = match ctx.host.elf(&so) {
        Ok(Some(info)) => {
            let cuda = match p::cuda_of_sonames(&info.needed) {
                Some((major, cudnn)) => Observed::found(
                    FrameworkCuda {
                        major,
                        minor: None,
                        cudnn_major: cudnn,
                        read_from: format!(
                            "NEEDED {}",
                            info.needed
                                .iter()
                                .filter(|n| n.starts_with("libcudart.so.")
                                    || n.starts_with("libcublas")
                                    || n.starts_with("libcudnn.so."))
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    },
                    source,
                ),
                None => {
                    Observed::failed(source, "its NEEDED sonames name no CUDA runtime or cuBLAS")
                }
            };
            let loads = loads_of(ctx, site, &so, wheel_libs);
            (cuda, loads)
        }
        Ok(None) => (
            Observed::absent(source, "libonnxruntime_providers_cuda.so is missing"),
            Vec::new(),
        ),
        Err(e) => (super::observed_error(source, e), Vec::new()),
    };
    FrameworkBuild {
        framework: "onnxruntime-gpu".into(),
        distribution: "onnxruntime-gpu".into(),
        version,
        cuda,
        same_release: Vec::new(),
        cuda_library: Some(so),
        loads,
    }
}

/// Where each package keeps its CUDA extension libraries: (distribution,
/// directory under site-packages or "" for site-packages itself, file-name prefix).
const EXTENSION_PLACES: &[(&str, &str, &str)] = &[
    ("flash-attn", "", "flash_attn_2_cuda"),
    ("flash-attn", "", "flash_attn_3"),
    ("xformers", "xformers", "_C"),
    ("vllm", "vllm", "_C"),
    ("vllm", "vllm", "_moe_C"),
    ("bitsandbytes", "bitsandbytes", "libbitsandbytes_cuda"),
    ("torchvision", "torchvision", "_C"),
    ("mmcv", "mmcv", "_ext"),
    ("deepspeed", "deepspeed/ops", ""),
];

/// The CUDA extension libraries of the env's CUDA packages, each with the
/// GPU code its `.nv_fatbin` holds (libraries without GPU code are left out).
fn extensions(
    host: &Host,
    site: &str,
    site_entries: &[crate::host::DirEntry],
    packages: &[Package],
) -> Vec<CudaExtension> {
    let mut out = Vec::new();
    for pkg in packages {
        for (_, sub, prefix) in EXTENSION_PLACES.iter().filter(|(n, _, _)| *n == pkg.name) {
            let (dir, names): (String, Vec<String>) = if sub.is_empty() {
                (
                    site.to_string(),
                    site_entries
                        .iter()
                        .filter(|e| e.kind == EntryKind::File)
                        .map(|e| e.name.clone())
                        .collect(),
                )
            } else {
                let d = format!("{site}/{sub}");
                let n = list_names(host, &d, EntryKind::File);
                (d, n)
            };
            for name in names
                .iter()
                .filter(|n| n.starts_with(prefix) && (n.ends_with(".so") || n.contains(".so.")))
                .take(16)
            {
                let path = format!("{dir}/{name}");
                let source = Source::Elf { path: path.clone() };
                let kernels = match host.elf(&path) {
                    Ok(Some(info)) => match info.fatbin {
                        Some(f) => Observed::found(f, source),
                        None => continue,
                    },
                    Ok(None) => continue,
                    Err(e) => super::observed_error(source, e),
                };
                out.push(CudaExtension {
                    package: pkg.name.clone(),
                    version: pkg.version.clone(),
                    path,
                    kernels,
                });
            }
        }
    }
    out
}

fn torch<'h>(
    ctx: &'h Context,
    site: &str,
    dists: &[Package],
    wheel_libs: &[LibraryFile],
    process: impl FnOnce() -> Option<loader::Process<'h, Host>>,
) -> Option<TorchInstall> {
    let host = &ctx.host;
    let vpath = format!("{site}/torch/version.py");
    let v = p::parse_torch_version_py(&host.read_string(&vpath).ok().flatten()?)?;
    let meta = dists
        .iter()
        .find(|d| d.name == "torch")
        .and_then(|d| {
            host.read_string(&format!("{site}/torch-{}.dist-info/METADATA", d.version))
                .ok()
                .flatten()
        })
        .and_then(|t| p::parse_dist_metadata(&t));
    let pin_mismatches = meta
        .map(|m| {
            m.requires
                .iter()
                .filter(|(n, spec)| n.starts_with("nvidia-") && spec.starts_with("=="))
                .filter_map(|(n, spec)| {
                    let want = &spec[2..];
                    let n = p::normalize_name(n);
                    match dists.iter().find(|d| d.name == n) {
                        Some(d) if d.version == want => None,
                        Some(d) => Some(format!("{n}: torch pins {want}, installed {}", d.version)),
                        None => Some(format!("{n}: torch pins {want}, not installed here")),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let lib_dir = format!("{site}/torch/lib");
    let so = format!("{lib_dir}/libtorch_cuda.so");
    let elf = ctx.timed(format!("python: {site}: torch: libtorch_cuda.so"), || {
        host.elf(&so)
    });
    let kernels = match &elf {
        Ok(Some(info)) => match &info.fatbin {
            Some(f) => Observed::found(f.clone(), Source::Elf { path: so.clone() }),
            None => Observed::absent(
                Source::Elf { path: so.clone() },
                "libtorch_cuda.so carries no GPU code",
            ),
        },
        Ok(None) => Observed::absent(
            Source::Listing {
                path: lib_dir.clone(),
            },
            if v.cuda.is_none() {
                "CPU-only build: no libtorch_cuda.so"
            } else {
                "libtorch_cuda.so is missing"
            },
        ),
        Err(e) => Observed::failed(Source::Elf { path: so.clone() }, e),
    };
    let loads = match &elf {
        Ok(Some(_)) => process()
            .map(|p| cuda_loads(&p, wheel_libs))
            .unwrap_or_default(),
        _ => vec![],
    };
    Some(TorchInstall {
        version: v.version,
        cuda: v.cuda.as_deref().and_then(|c| c.parse().ok()),
        git_version: v.git_version,
        source: Source::file(vpath),
        kernels,
        loads,
        pin_mismatches,
    })
}

/// The Python interpreter of the environment that owns `site`
/// (`PREFIX/lib/python3.X/site-packages` → `PREFIX/bin/python3.X`).
fn interpreter(host: &Host, site: &str) -> Option<String> {
    let (prefix, rest) = site.split_once("/lib/python")?;
    let ver = rest.split('/').next()?;
    [
        format!("{prefix}/bin/python{ver}"),
        format!("{prefix}/bin/python3"),
    ]
    .into_iter()
    .find(|p| host.exists(p).unwrap_or(false))
}

/// The loader model's inputs: target, environment, and the parsed cache.
fn loader_inputs(ctx: &Context) -> (&loader::Target, &loader::LoaderEnvironment, &[CacheEntry]) {
    let (target, env) = ctx.loader();
    let cache = match ctx.ld_cache() {
        Ok(Some(c)) => c.as_slice(),
        _ => &[],
    };
    (target, env, cache)
}

/// Every CUDA library `import torch` and its first GPU use load, resolved
/// by the loader model ([`loader::torch`]).
fn torch_process<'h>(ctx: &'h Context, site: &str) -> Option<loader::Process<'h, Host>> {
    let (target, env, cache) = loader_inputs(ctx);
    let python = interpreter(&ctx.host, site);
    loader::torch::torch_process(&ctx.host, target, env, cache, python.as_deref(), site).ok()
}

/// Every CUDA library loading `so` (by path, from the interpreter of `site`) brings in.
fn loads_of(
    ctx: &Context,
    site: &str,
    so: &str,
    wheel_libs: &[LibraryFile],
) -> Vec<ResolvedLibrary> {
    let (target, env, cache) = loader_inputs(ctx);
    let python = interpreter(&ctx.host, site);
    let start = |exe: Option<&str>| {
        loader::Process::start_with(
            &*ctx.host,
            target,
            env,
            cache,
            loader::Rules::all(),
            exe,
            true,
        )
    };
    let Ok(mut p) = start(python.as_deref()).or_else(|_| start(None)) else {
        return Vec::new();
    };
    if let Err(loader::LoadError::NotFound { name, by }) = p.dlopen(0, so) {
        p.missing.push((name, by));
    }
    cuda_loads(&p, wheel_libs)
}

/// Whether a library name is one of the CUDA libraries reported in `loads`.
fn is_cuda_library(name: &str) -> bool {
    let stem = name.split(".so").next().unwrap_or("");
    family_of(name).is_some()
        || matches!(
            stem,
            "libcuda"
                | "libnvidia-ml"
                | "libcupti"
                | "libcufile"
                | "libcusparseLt"
                | "libnvshmem_host"
                | "libnvrtc-builtins"
                | "libnvToolsExt"
        )
        || stem.starts_with("libcudnn_")
}

/// The CUDA libraries of a modelled process: those loaded, with the rule and
/// directory that found them, then those the loader would not find.
fn cuda_loads(p: &loader::Process<'_, Host>, wheel_libs: &[LibraryFile]) -> Vec<ResolvedLibrary> {
    let mut out: Vec<ResolvedLibrary> = Vec::new();
    for o in p.objects.iter().skip(2) {
        let name = o
            .soname()
            .map(String::from)
            .unwrap_or_else(|| o.name.rsplit('/').next().unwrap_or("").to_string());
        if !is_cuda_library(&name) {
            continue;
        }
        let via = match o.rule {
            loader::LoadRule::Framework => format!("torch _preload_cuda_deps: {}", o.source),
            loader::LoadRule::Path => format!("opened by path: {}", o.source),
            _ => o.source.clone(),
        };
        let mut r = found(&name, o.real.clone(), via, wheel_libs);
        r.rule = Some(o.rule);
        r.source = Some(o.source.clone());
        r.requested_by = o
            .requested_by
            .map(|l| p.objects[l].real.clone())
            .filter(|s| !s.is_empty());
        out.push(r);
    }
    for (name, by) in &p.missing {
        if is_cuda_library(name) && !out.iter().any(|r| &r.soname == name) {
            out.push(ResolvedLibrary {
                soname: name.clone(),
                path: None,
                version: None,
                via: "not found by the loader".into(),
                rule: None,
                source: None,
                requested_by: Some(by.clone()),
            });
        }
    }
    out
}

fn found(soname: &str, real: String, via: String, wheel_libs: &[LibraryFile]) -> ResolvedLibrary {
    let version = wheel_libs
        .iter()
        .find(|w| w.real_path == real)
        .and_then(|w| w.version.clone())
        .or_else(|| system::version_from_file_name(real.rsplit('/').next().unwrap_or("")));
    ResolvedLibrary {
        soname: soname.into(),
        path: Some(real),
        version,
        via,
        rule: None,
        source: None,
        requested_by: None,
    }
}
