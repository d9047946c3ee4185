//! Checks of the GPU hardware: is an NVIDIA GPU visible at all, its memory
//! (ECC, row remapping), throttling, the PCIe link, and the probe's measured rates.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::View;
use crate::{Evidence, Finding, Layer, Severity};
use gpukb_facts::{Observed, Source};

/// No NVIDIA device on the PCI bus, in NVML or in CUDA, while something here (a CUDA
/// framework, CUDA_VISIBLE_DEVICES…) expects one: nothing above the hardware can work.
/// Under WSL2 it is undecided (the GPU is behind /dev/dxg, not on the PCI bus).
/// KB: `nvidia-smi-no-devices-found-rminitadapter`, `gpu-power-cables-not-connected`.
pub(super) const NO_NVIDIA_GPU_VISIBLE: Check = Check {
    id: CheckId::NoNvidiaGpuVisible,
    layer: Layer::Hardware,
    category: "no_nvidia_gpu",
    explained_by: &[CheckId::WslLibcudaMissing],
    context: false,
    meaning: "no NVIDIA GPU is visible on the PCI bus, to NVML or to CUDA",
    run: no_nvidia_gpu_visible,
    fix: fixes::none,
};

fn no_nvidia_gpu_visible(v: &View) -> Conclusion {
    if v.is_jetson() {
        return Conclusion::Clear("a Jetson's integrated GPU".into());
    }
    let gpus = v.gpus();
    if !gpus.is_empty() {
        return Conclusion::Clear(format!("{} GPU(s) visible", gpus.len()));
    }
    if v.is_wsl() {
        return Conclusion::Undecided(
            "WSL2 shows the GPU through /dev/dxg, not on the PCI bus".into(),
        );
    }
    let Some(pci) = v.pci_gpus() else {
        return Conclusion::Undecided("the PCI bus was not observed and no GPU was listed".into());
    };
    if !pci.is_empty() {
        return Conclusion::Clear(format!("{} NVIDIA GPU(s) on the PCI bus", pci.len()));
    }
    let src = v.fp.pci.source().clone();
    let mut ev = vec![Evidence::new(
        "no NVIDIA (10de) display or 3D controller on the PCI bus",
        &src,
    )];
    match v.expects_gpu() {
        Some(why) => {
            ev.push(Evidence::new(
                why.clone(),
                &Source::Derived {
                    from: "python environments, env".into(),
                },
            ));
            found(
                finding(
                    None,
                    format!("No NVIDIA GPU is visible, but {why}"),
                    Severity::Failure,
                    ev,
                )
                .confirm(&["lspci -nn | grep -i nvidia", "ls /dev/nvidia*"]),
            )
        }
        None => found(finding(
            None,
            "No NVIDIA GPU visible, and nothing here expects one".into(),
            Severity::Info,
            ev,
        )),
    }
}

/// Failed or pending row remapping, pending page retirement, or uncorrectable ECC errors in
/// NVML: the GPU needs a reset, or service when remapping failed.
/// KB: `row-remap-pending-gpu-reset-required`, `xid-48-double-bit-ecc-error`, `cuda-uncorrectable-ecc-error-214`.
pub(super) const GPU_MEMORY_FAULT: Check = Check {
    id: CheckId::GpuMemoryFault,
    layer: Layer::Hardware,
    category: "gpu_memory_hw_failure",
    explained_by: &[],
    context: false,
    meaning: "a GPU reports uncorrectable ECC errors, failed or pending row remapping",
    run: gpu_memory_fault,
    fix: fixes::gpu_memory_fault,
};

fn gpu_memory_fault(v: &View) -> Conclusion {
    per_gpu(v, "memory faults", |g, _| {
        let r = g.remapped_rows.as_ref();
        if r.is_some_and(|r| r.failed) {
            return Some((
                format!(
                    "GPU {} ({}): row remapping failed; the GPU needs service",
                    g.index, g.name
                ),
                Severity::Failure,
            ));
        }
        if r.is_some_and(|r| r.pending) || g.retired_pages_pending == Some(true) {
            return Some((
                format!(
                    "GPU {} ({}): a row remap / page retirement is pending until the GPU is reset",
                    g.index, g.name
                ),
                Severity::Warning,
            ));
        }
        match g.ecc_uncorrected_aggregate {
            Some(n) if n > 0 => Some((
                format!(
                    "GPU {} ({}): {n} uncorrectable ECC errors recorded",
                    g.index, g.name
                ),
                Severity::Warning,
            )),
            _ => None,
        }
    })
    .with_confirm(&["nvidia-smi -q -d ROW_REMAPPER,ECC"])
}

/// NVML clock-event reasons that hold the clocks down for heat or a hardware power brake
/// (HW_SLOWDOWN, HW/SW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN): the GPU runs slower than rated.
/// KB: `gpu-thermal-slowdown`, `gpu-power-cap-or-power-brake-throttling`.
pub(super) const THERMAL_OR_POWER_THROTTLING: Check = Check {
    id: CheckId::ThermalOrPowerThrottling,
    layer: Layer::Hardware,
    category: "thermal_power_throttling",
    explained_by: &[],
    context: false,
    meaning: "a GPU's clocks are held down by a thermal or hardware power reason",
    run: throttling,
    fix: fixes::none,
};

fn throttling(v: &View) -> Conclusion {
    const BAD: &[&str] = &[
        "HW_SLOWDOWN",
        "HW_THERMAL_SLOWDOWN",
        "SW_THERMAL_SLOWDOWN",
        "HW_POWER_BRAKE_SLOWDOWN",
    ];
    per_gpu(v, "throttling", |g, _| {
        let reasons = g.throttle_reasons.as_ref()?;
        let bad: Vec<&str> = reasons
            .iter()
            .map(String::as_str)
            .filter(|r| BAD.contains(r))
            .collect();
        (!bad.is_empty()).then(|| {
            (
                format!(
                    "GPU {} ({}) is throttled: {}{}",
                    g.index,
                    g.name,
                    bad.join(", "),
                    g.temperature_c
                        .map(|t| format!(" at {t} °C"))
                        .unwrap_or_default()
                ),
                Severity::Warning,
            )
        })
    })
    .with_confirm(&["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"])
}

/// A PCIe link narrower than its maximum, or a lower generation while not idle (an idle
/// lower generation is normal power saving and only informational).
/// KB: `pcie-link-trained-below-max`.
pub(super) const PCIE_LINK_DEGRADED: Check = Check {
    id: CheckId::PcieLinkDegraded,
    layer: Layer::Hardware,
    category: "pcie_link_downtrained",
    explained_by: &[],
    context: false,
    meaning: "a GPU's PCIe link is narrower than its maximum, or slower under load",
    run: pcie_link_degraded,
    fix: fixes::none,
};

fn pcie_link_degraded(v: &View) -> Conclusion {
    per_gpu(v, "PCIe link", |g, _| {
        let idle = g
            .throttle_reasons
            .as_ref()
            .is_some_and(|r| r.iter().any(|x| x == "GPU_IDLE"));
        match (g.pcie_width_current, g.pcie_width_max) {
            (Some(c), Some(m)) if c < m => {
                return Some((
                    format!("GPU {} ({}): PCIe link x{c} of x{m}", g.index, g.name),
                    Severity::Warning,
                ));
            }
            _ => {}
        }
        match (g.pcie_gen_current, g.pcie_gen_max) {
            (Some(c), Some(m)) if c < m && !idle => Some((
                format!(
                    "GPU {} ({}): PCIe Gen{c} of Gen{m} while not idle",
                    g.index, g.name
                ),
                Severity::Warning,
            )),
            (Some(c), Some(m)) if c < m => Some((
                format!(
                    "GPU {} ({}) idles at PCIe Gen{c} of Gen{m} (normal power saving)",
                    g.index, g.name
                ),
                Severity::Info,
            )),
            _ => None,
        }
    })
    .with_confirm(&["nvidia-smi -q -d PCIE   # under load: the generation rises when busy"])
}

/// A measured copy/FLOP/PCIe rate far below its reference (`gpukb doctor --probe`);
/// throttling, a degraded link or a memory fault explain it.
pub(super) const PROBE_THROUGHPUT_LOW: Check = Check {
    id: CheckId::ProbeThroughputLow,
    layer: Layer::Hardware,
    category: "thermal_power_throttling",
    explained_by: &[
        CheckId::ThermalOrPowerThrottling,
        CheckId::PcieLinkDegraded,
        CheckId::GpuMemoryFault,
    ],
    context: false,
    meaning: "a measured copy/FLOP/PCIe rate is far below its reference",
    run: probe_throughput_low,
    fix: fixes::none,
};

fn probe_throughput_low(v: &View) -> Conclusion {
    match probed(v, "throughput", "measures far below its reference", |g| {
        g.slow.clone()
    }) {
        Conclusion::Found(fs) => Conclusion::Found(
            fs.into_iter()
                .map(|mut f| {
                    f.severity = Severity::Warning;
                    f.confirm = vec![
                        "gpukb probe".into(),
                        "nvidia-smi -q -d PERFORMANCE,CLOCK".into(),
                    ];
                    f
                })
                .collect(),
        ),
        o => o,
    }
}

/// A GPU the driver reported fallen off the bus in this boot's kernel log
/// (Xid 79), or, where the kernel log cannot be read, a GPU on the PCI bus
/// (bound to nvidia) that NVML does not list or reports lost: the driver can
/// no longer reach it until the machine is power-cycled.
/// KB: `xid-79-gpu-fallen-off-the-bus`.
pub(super) const GPU_FELL_OFF_BUS: Check = Check {
    id: CheckId::GpuFellOffBus,
    layer: Layer::Hardware,
    category: "xid_hardware",
    explained_by: &[CheckId::OpenModuleRequired, CheckId::DriverBranchDropsGpu],
    context: false,
    meaning: "a GPU fell off the bus (Xid 79 in this boot's kernel log), or is on the PCI bus but lost to NVML",
    run: gpu_fell_off_bus,
    fix: fixes::none,
};

/// `(domain, bus, device)` of a PCI address in any of the forms sysfs
/// (`0000:3b:00.0`), NVML (`00000000:3B:00.0`) and the driver's log
/// (`PCI:0000:3b:00`) write it.
pub(super) fn pci_key(addr: &str) -> Option<(u32, u8, u8)> {
    let a = addr.trim().trim_start_matches("PCI:");
    let mut parts: Vec<&str> = a.split(':').collect();
    let dev_fn = parts.pop()?;
    let dev = dev_fn.split('.').next()?;
    let bus = parts.pop()?;
    let dom = parts.pop().unwrap_or("0");
    Some((
        u32::from_str_radix(dom, 16).ok()?,
        u8::from_str_radix(bus, 16).ok()?,
        u8::from_str_radix(dev, 16).ok()?,
    ))
}

/// NVIDIA GPUs bound to `nvidia` on the PCI bus that NVML does not list, or
/// lists as lost (`NVML_ERROR_GPU_IS_LOST`), with what says so.
fn lost_to_nvml(v: &View) -> Option<Vec<(String, String, Source)>> {
    let Observed::Found {
        value: nvml,
        source: nsrc,
    } = &v.fp.nvml
    else {
        return None;
    };
    let Observed::Found { value: pci, .. } = &v.fp.pci else {
        return None;
    };
    let listed: Vec<(u32, u8, u8)> = nvml
        .gpus
        .iter()
        .filter(|g| !g.unavailable.iter().any(|u| u.contains("GPU_IS_LOST")))
        .filter_map(|g| g.pci_bus_id.as_deref().and_then(pci_key))
        .collect();
    let mut out = Vec::new();
    for d in pci.iter().filter(|d| d.is_nvidia_gpu()) {
        if d.driver.value().map(String::as_str) != Some("nvidia") {
            continue;
        }
        if pci_key(&d.address).is_some_and(|k| !listed.contains(&k)) {
            out.push((
                d.address.clone(),
                format!("{} is an NVIDIA GPU bound to nvidia on the PCI bus; NVML lists {} GPU(s), not this one", d.address, listed.len()),
                nsrc.clone(),
            ));
        }
    }
    for g in nvml
        .gpus
        .iter()
        .filter(|g| g.unavailable.iter().any(|u| u.contains("GPU_IS_LOST")))
    {
        if out.is_empty() || g.pci_bus_id.is_some() {
            let what = g
                .unavailable
                .iter()
                .find(|u| u.contains("GPU_IS_LOST"))
                .cloned()
                .unwrap_or_default();
            out.push((
                g.pci_bus_id
                    .clone()
                    .unwrap_or_else(|| format!("NVML GPU {}", g.index)),
                what,
                nsrc.clone(),
            ));
        }
    }
    Some(out)
}

fn gpu_fell_off_bus(v: &View) -> Conclusion {
    let lost = lost_to_nvml(v);
    match &v.fp.kernel_log {
        Observed::Found { value, source } => {
            let mut out: Vec<Finding> = Vec::new();
            for e in value.fell_off_bus() {
                let key = pci_key(&e.gpu);
                if out.iter().any(|f| f.id == e.gpu) {
                    continue;
                }
                let title = format!("GPU {} has fallen off the bus (Xid 79 in this boot's kernel log): the driver cannot reach it until the machine is power-cycled", e.gpu);
                let mut ev = vec![Evidence::new(e.message.clone(), source)];
                if let Some((addr, why, s)) = lost.iter().flatten().find(|(a, _, _)| pci_key(a) == key) {
                    let _ = addr;
                    ev.push(Evidence::new(why.clone(), s));
                }
                out.push(
                    finding(Some(e.gpu.clone()), title, Severity::Failure, ev)
                        .confirm(&["sudo dmesg | grep -E 'NVRM: Xid|fallen off the bus'", "nvidia-smi", "lspci -nn | grep -i nvidia"]),
                );
            }
            if out.is_empty() {
                Conclusion::Clear(format!("no Xid 79 in this boot's kernel log ({} records read)", value.records))
            } else {
                Conclusion::Found(out)
            }
        }
        klog => match lost {
            Some(l) if !l.is_empty() => Conclusion::Found(
                l.into_iter()
                    .map(|(addr, why, s)| {
                        let title = format!("GPU {addr} is on the PCI bus but lost to NVML: it may have fallen off the bus (the kernel log, which would show Xid 79, is not readable here)");
                        finding(Some(addr), title, Severity::Failure, vec![
                            Evidence::new(why, &s),
                            Evidence::new(format!("kernel log: {}", klog.why_not().unwrap_or("")), klog.source()),
                        ])
                        .confirm(&["sudo dmesg | grep -E 'NVRM: Xid|fallen off the bus'", "nvidia-smi", "lspci -nn | grep -i nvidia"])
                    })
                    .collect(),
            ),
            Some(_) => Conclusion::Clear("every NVIDIA GPU on the PCI bus is listed by NVML".into()),
            None => Conclusion::Undecided(format!(
                "the kernel log is not observed ({}) and NVML or the PCI bus is not either",
                klog.why_not().unwrap_or("")
            )),
        },
    }
}
