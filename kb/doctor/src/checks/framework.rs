//! Checks of the framework builds: CPU-only torch, Jetson wheels, torch's pins,
//! JAX's plugin against jaxlib.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::{framework_key, View};
use crate::{Affects, Evidence, Layer, Severity};
use gpukb_facts::compat;
use gpukb_facts::Source;

/// A CPU-only torch build (`torch/version.py: cuda = None`) on a machine with an NVIDIA GPU.
/// KB: `torch-not-compiled-with-cuda`, `conda-installed-cpu-pytorch-build`.
pub(super) const TORCH_CPU_ONLY: Check = Check {
    id: CheckId::TorchCpuOnly,
    layer: Layer::Framework,
    category: "cpu_only_wheel",
    explained_by: &[],
    context: false,
    meaning: "the torch install is a CPU-only build on a machine with an NVIDIA GPU",
    run: torch_cpu_only,
    fix: fixes::torch_build,
};

fn torch_cpu_only(v: &View) -> Conclusion {
    let torches = v.torches();
    if torches.is_empty() {
        return Conclusion::Clear("no torch installed".into());
    }
    let gpu_here =
        !v.gpus().is_empty() || v.pci_gpus().is_some_and(|g| !g.is_empty()) || v.is_jetson();
    if !gpu_here {
        return Conclusion::Undecided("no GPU observed to judge a CPU build against".into());
    }
    let mut out = Vec::new();
    for (e, t) in torches {
        if t.cuda.is_none() {
            if v.is_jetson() {
                continue;
            } // the Jetson wheel checks judge those
            let sev = if v.is_active(e) {
                Severity::Failure
            } else {
                Severity::Warning
            };
            out.push(
                finding(
                    Some(e.site_packages.clone()),
                    format!(
                        "torch {} in {} is a CPU-only build",
                        t.version, e.site_packages
                    ),
                    sev,
                    vec![Evidence::new(
                        format!("torch/version.py: cuda = None ({})", t.version),
                        &t.source,
                    )],
                )
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&[
                    "python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'",
                ]),
            );
        }
    }
    if out.is_empty() {
        Conclusion::Clear("every torch is a CUDA build".into())
    } else {
        Conclusion::Found(out)
    }
}

/// A Jetson torch wheel built for another JetPack than this one (`gpukb_jetson::check_torch_wheel`).
/// KB: `jetson-wheel-for-other-jetpack`.
pub(super) const JETSON_TORCH_WHEEL_MISMATCH: Check = Check {
    id: CheckId::JetsonTorchWheelMismatch,
    layer: Layer::Framework,
    category: "jetson_jetpack_mismatch",
    explained_by: &[],
    context: false,
    meaning: "a Jetson torch wheel built for another JetPack",
    run: jetson_torch_wheel_mismatch,
    fix: fixes::none,
};

fn jetson_torch_wheel_mismatch(v: &View) -> Conclusion {
    jetson_wheels(v, false)
}

/// A generic PyPI aarch64 torch wheel (CPU-only or SBSA CUDA) on a Jetson, which needs
/// NVIDIA's Jetson wheels (`gpukb_jetson::check_torch_wheel`).
/// KB: `jetson-generic-aarch64-torch-no-cuda`.
pub(super) const JETSON_GENERIC_AARCH64_WHEEL: Check = Check {
    id: CheckId::JetsonGenericAarch64Wheel,
    layer: Layer::Framework,
    category: "jetson_pip_wheel",
    explained_by: &[],
    context: false,
    meaning: "a generic PyPI aarch64 torch wheel on a Jetson",
    run: jetson_generic_aarch64_wheel,
    fix: fixes::none,
};

fn jetson_generic_aarch64_wheel(v: &View) -> Conclusion {
    jetson_wheels(v, true)
}

/// nvidia-* wheels in an env that do not satisfy the installed torch's pins (its METADATA).
/// KB: `cudnn-version-incompatibility-ld-library-path`.
pub(super) const TORCH_PIN_MISMATCH: Check = Check {
    id: CheckId::TorchPinMismatch,
    layer: Layer::Framework,
    category: "cudnn_version_mismatch",
    explained_by: &[
        CheckId::TorchLibraryMissing,
        CheckId::LibraryShadowedByLdLibraryPath,
    ],
    context: false,
    meaning: "installed nvidia-* wheels do not satisfy torch's pins",
    run: torch_pin_mismatch,
    fix: fixes::none,
};

fn torch_pin_mismatch(v: &View) -> Conclusion {
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        if !t.pin_mismatches.is_empty() {
            out.push(
                finding(
                    Some(e.site_packages.clone()),
                    format!(
                        "torch {} pins nvidia wheels that are not installed: {}",
                        t.version,
                        t.pin_mismatches.join("; ")
                    ),
                    Severity::Warning,
                    vec![Evidence::new(t.pin_mismatches.join("; "), &t.source)],
                )
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&["pip check"]),
            );
        }
    }
    if out.is_empty() {
        Conclusion::Clear("installed nvidia wheels satisfy torch's pins".into())
    } else {
        Conclusion::Found(out)
    }
}

/// A JAX CUDA plugin or pjrt not of jaxlib's release (`gpukb_facts::compat::jax_plugin_usable`):
/// jaxlib ignores the plugin and JAX runs on the CPU.
/// KB: `jax-cuda-plugin-jaxlib-version-mismatch`.
pub(super) const JAX_PLUGIN_VERSION_MISMATCH: Check = Check {
    id: CheckId::JaxPluginVersionMismatch,
    layer: Layer::Framework,
    category: "jax_plugin_version_mismatch",
    explained_by: &[],
    context: false,
    meaning: "JAX's CUDA plugin (or its pjrt) is not jaxlib's release, so jaxlib does not use it and JAX runs on the CPU",
    run: jax_plugin_version_mismatch,
    fix: fixes::jax_plugin_version_mismatch,
};

fn jax_plugin_version_mismatch(v: &View) -> Conclusion {
    let mut out = Vec::new();
    let mut seen = 0;
    for (e, fw) in v.frameworks() {
        if fw.framework != "jax" {
            continue;
        }
        seen += 1;
        let listing = Source::Listing {
            path: e.site_packages.clone(),
        };
        let jaxlib = fw.same_release.iter().find(|p| p.name == "jaxlib");
        let title = match jaxlib {
            None => format!(
                "{} {} is installed without jaxlib: JAX cannot use it",
                fw.distribution, fw.version
            ),
            Some(lib) => {
                let off: Vec<String> = fw
                    .same_release
                    .iter()
                    .filter(|p| {
                        p.name != "jaxlib" && !compat::jax_plugin_usable(&lib.version, &p.version)
                    })
                    .map(|p| format!("{} {}", p.name, p.version))
                    .collect();
                if off.is_empty() {
                    continue;
                }
                format!(
                    "{} {} not jaxlib {}'s release: jaxlib does not use the plugin and JAX runs on the CPU",
                    off.join(" and "),
                    if off.len() == 1 { "is" } else { "are" },
                    lib.version
                )
            }
        };
        let installed = fw
            .same_release
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(
            finding(
                Some(framework_key(e, fw)),
                title,
                env_severity(v, e),
                vec![Evidence::new(format!("installed: {installed}"), &listing)],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "pip list 2>/dev/null | grep -Ei '^(jax|jaxlib|jax-cuda)'",
                "python3 -c 'import jax; print(jax.devices())'",
            ]),
        );
    }
    match (seen, out.is_empty()) {
        (0, _) if v.has_package(&["jax-cuda12-plugin", "jax-cuda13-plugin"]) => {
            Conclusion::Undecided("JAX's CUDA plugin was listed but not read".into())
        }
        (0, _) => Conclusion::Undecided("no JAX CUDA plugin in the Python envs read".into()),
        (_, true) => Conclusion::Clear("every JAX CUDA plugin is jaxlib's release".into()),
        _ => Conclusion::Found(out),
    }
}

fn jetson_wheels(v: &View, want_generic: bool) -> Conclusion {
    let Some(report) = v.fp.jetson.value() else {
        return Conclusion::Clear("not a Jetson".into());
    };
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        let cuda = t.cuda.map(|c| c.to_string());
        let verdict = gpukb_jetson::check_torch_wheel(&t.version, cuda.as_deref(), report);
        use gpukb_jetson::torch::{TorchBuild, TorchStatus};
        if verdict.status != TorchStatus::Broken {
            continue;
        }
        let generic = matches!(verdict.build, TorchBuild::CpuOnly | TorchBuild::GenericCuda);
        if generic != want_generic {
            continue;
        }
        out.push(
            finding(
                Some(e.site_packages.clone()),
                verdict.message.clone(),
                if v.is_active(e) {
                    Severity::Failure
                } else {
                    Severity::Warning
                },
                vec![
                    Evidence::new(
                        format!(
                            "torch {} ({})",
                            t.version,
                            cuda.unwrap_or_else(|| "no CUDA".into())
                        ),
                        &t.source,
                    ),
                    Evidence::new(
                        format!(
                            "JetPack {}",
                            report
                                .jetpack
                                .as_ref()
                                .map(|j| j.version.clone())
                                .unwrap_or("?".into())
                        ),
                        v.fp.jetson.source(),
                    ),
                ],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())'",
                "cat /etc/nv_tegra_release",
            ]),
        );
    }
    if out.is_empty() {
        Conclusion::Clear("the torch wheels fit this JetPack".into())
    } else {
        Conclusion::Found(out)
    }
}
