//! Checks of the kernel images: does torch or a CUDA extension carry code a
//! GPU here runs, and does the driver load probe images as the compatibility engine predicts.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::View;
use crate::{Affects, Evidence, Layer, Severity};
use gpukb_facts::compat::{self, ImageOutcome};
use gpukb_facts::Observed;

/// A GPU that can run neither the SASS nor the PTX of the installed torch
/// (`gpukb_facts::compat::decide_on`): "no kernel image is available for execution on the device".
/// KB: `torch-wheel-missing-gpu-arch`, `blackwell-sm120-needs-cu128-wheel`, `pascal-volta-dropped-from-cu128-wheel`.
pub(super) const TORCH_LACKS_GPU_ARCH: Check = Check {
    id: CheckId::TorchLacksGpuArch,
    layer: Layer::KernelImage,
    category: "arch_mismatch_wheel",
    explained_by: &[CheckId::TorchCpuOnly],
    context: false,
    meaning: "a GPU can run neither the SASS nor the PTX of the installed torch",
    run: torch_lacks_gpu_arch,
    fix: fixes::torch_build,
};

fn torch_lacks_gpu_arch(v: &View) -> Conclusion {
    let gpus = v.gpus();
    if gpus.is_empty() {
        return Conclusion::Undecided("no GPU compute capability observed".into());
    }
    let driver_cuda = v.driver_cuda().map(|(c, _)| c);
    let mut out = Vec::new();
    let mut judged = false;
    let mut why_undecided = String::new();
    for (e, t) in v.torches() {
        if t.cuda.is_none() {
            continue;
        }
        let images = match &t.kernels {
            Observed::Found { value, .. } => {
                value.targets.iter().map(|x| x.image).collect::<Vec<_>>()
            }
            o => {
                why_undecided = format!("torch GPU code: {}", o.why_not().unwrap_or(""));
                continue;
            }
        };
        judged = true;
        for g in &gpus {
            let Some(cc) = g.cc else { continue };
            let dcuda = driver_cuda.or(t.cuda).map(|c| c.api()).unwrap_or(13000);
            let dev = tegra_aware_device(v, cc);
            let d = compat::decide_on(dev, dcuda, &images);
            if matches!(d.outcome, ImageOutcome::NoImage | ImageOutcome::PtxTooNew) {
                let sev = if v.is_active(e) {
                    Severity::Failure
                } else {
                    Severity::Warning
                };
                out.push(finding(Some(format!("gpu{}", g.index)),
                    format!("torch {} has no kernel image for {} (sm_{}): {}", t.version, g.name, cc.sm(), if d.outcome == ImageOutcome::NoImage { "no kernel image is available for execution on the device" } else { "its PTX is too new for this driver (222)" }),
                    sev,
                    vec![Evidence::new(d.reason.clone(), t.kernels.source()), Evidence::new(format!("{} is CC {cc}", g.name), &g.source)])
                    .affects(vec![Affects::gpu(g.index, &g.uuid), Affects::env(&e.site_packages)])
                    .confirm(&["python3 -c 'import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'"]));
            }
        }
    }
    if !out.is_empty() {
        Conclusion::Found(out)
    } else if judged {
        Conclusion::Clear("every GPU runs the torch builds' code".into())
    } else if why_undecided.is_empty() {
        Conclusion::Clear("no CUDA torch installed".into())
    } else {
        Conclusion::Undecided(why_undecided)
    }
}

/// A CUDA extension library (flash-attn, xformers, vLLM, bitsandbytes…) with no kernel image
/// a GPU runs (`gpukb_facts::compat::decide_on` over its cubins/PTX).
/// KB: `prebuilt-extension-wheel-lacks-gpu-arch`, `bitsandbytes-binary-lacks-gpu-arch`.
pub(super) const EXTENSION_LACKS_GPU_ARCH: Check = Check {
    id: CheckId::ExtensionLacksGpuArch,
    layer: Layer::KernelImage,
    category: "arch_mismatch_prebuilt",
    explained_by: &[CheckId::TorchCpuOnly, CheckId::TorchLacksGpuArch],
    context: false,
    meaning: "a CUDA extension (flash-attn, xformers, vLLM, bitsandbytes…) has no kernel image a GPU runs",
    run: extension_lacks_gpu_arch,
    fix: fixes::extension_lacks_gpu_arch,
};

fn extension_lacks_gpu_arch(v: &View) -> Conclusion {
    let gpus = v.gpus();
    let exts: Vec<_> =
        v.fp.python
            .iter()
            .flat_map(|e| e.extensions.iter().map(move |x| (e, x)))
            .collect();
    if exts.is_empty() {
        return Conclusion::Clear("no CUDA extension libraries found".into());
    }
    if gpus.is_empty() {
        return Conclusion::Undecided("no GPU compute capability observed".into());
    }
    let driver_cuda = v.driver_cuda().map(|(c, _)| c.api()).unwrap_or(13000);
    let mut out = Vec::new();
    let mut judged = 0;
    for (e, x) in exts {
        let Observed::Found { value, source } = &x.kernels else {
            continue;
        };
        judged += 1;
        let images: Vec<_> = value.targets.iter().map(|t| t.image).collect();
        for g in &gpus {
            let Some(cc) = g.cc else { continue };
            let dev = tegra_aware_device(v, cc);
            let d = compat::decide_on(dev, driver_cuda, &images);
            if matches!(d.outcome, ImageOutcome::NoImage | ImageOutcome::PtxTooNew) {
                let file = x.path.rsplit('/').next().unwrap_or(&x.path);
                out.push(
                    finding(
                        Some(format!("{}:gpu{}", x.package, g.index)),
                        format!(
                            "{} {} ({file}) has no kernel image for {} (sm_{})",
                            x.package,
                            x.version,
                            g.name,
                            cc.sm()
                        ),
                        if v.is_active(e) {
                            Severity::Failure
                        } else {
                            Severity::Warning
                        },
                        vec![
                            Evidence::new(d.reason.clone(), source),
                            Evidence::new(format!("{} is CC {cc}", g.name), &g.source),
                        ],
                    )
                    .affects(vec![
                        Affects::gpu(g.index, &g.uuid),
                        Affects::library(&x.path),
                        Affects::env(&e.site_packages),
                    ])
                    .confirm(&[&format!(
                        "cuobjdump --list-elf {} | cut -d. -f3 | sort | uniq -c",
                        x.path
                    )]),
                );
            }
        }
    }
    if !out.is_empty() {
        Conclusion::Found(out)
    } else if judged > 0 {
        Conclusion::Clear(format!(
            "{judged} CUDA extension(s) carry code every GPU runs"
        ))
    } else {
        Conclusion::Undecided("the extensions' GPU code was not observed".into())
    }
}

/// The driver loading probe images differently than the compatibility engine predicts
/// (`gpukb doctor --probe`): the engine's rules or the driver are wrong for this GPU.
pub(super) const PROBE_LOADS_DISAGREE: Check = Check {
    id: CheckId::ProbeLoadsDisagree,
    layer: Layer::KernelImage,
    category: "arch_mismatch_prebuilt",
    explained_by: &[],
    context: false,
    meaning: "the driver loaded probe images differently than the compatibility engine predicts",
    run: probe_loads_disagree,
    fix: fixes::none,
};

fn probe_loads_disagree(v: &View) -> Conclusion {
    match probed(
        v,
        "module loads",
        "loads code images differently than the CUDA compatibility rules predict",
        |g| g.load_mismatches.clone(),
    ) {
        Conclusion::Found(fs) => Conclusion::Found(
            fs.into_iter()
                .map(|mut f| {
                    f.severity = Severity::Warning;
                    f
                })
                .collect(),
        ),
        o => o,
    }
}

/// The compatibility engine's view of a GPU: Tegra when its CC is a Tegra
/// one, or when this is a Jetson and the GPU is the one the Jetson report
/// names (its CC); a discrete GPU on a Jetson/IGX host keeps desktop rules.
fn tegra_aware_device(v: &View, cc: gpukb_facts::ComputeCapability) -> compat::Device {
    let jetson_igpu =
        v.fp.jetson
            .value()
            .and_then(|j| j.compute_capability.as_ref())
            .and_then(|c| c.value.parse::<gpukb_facts::ComputeCapability>().ok())
            .is_some_and(|jcc| jcc == cc);
    compat::Device {
        cc: cc.pair(),
        tegra: jetson_igpu || compat::is_tegra(cc.pair()),
    }
}
