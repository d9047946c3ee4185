//! The one conversion from a [`Fingerprint`] to the planner's machine
//! ([`PlannerFacts`]: GPUs with their compute capability, the driver and the
//! CUDA it runs, the architecture, Python, JetPack/L4T), used by `gpukb plan`,
//! the doctor's torch fix and the report, so they never plan for different
//! machines.

use crate::builds::{parse_python, Arch};
use crate::fingerprint::{Fingerprint, Observed};
use crate::gpus::{self, GpuClass};
use crate::plan::{DriverFact, GpuFact, JetsonFact, PlannerFacts};

/// A GPU as the planner knows it: its name resolved, the observed compute
/// capability first.
fn gpu_from_name(
    name: &str,
    cc: Option<crate::ComputeCapability>,
    source: String,
) -> Option<GpuFact> {
    // Every name NVML prints resolves (NVIDIA's supported-gpus.json, the CC
    // table, form-factor/MIG/laptop variants); the observed CC wins.
    let row = gpus::resolve(name).ok();
    let cc = cc.or(row.as_ref().map(|r| r.cc))?;
    Some(GpuFact {
        name: name.to_string(),
        cc,
        class: row.as_ref().filter(|r| r.cc == cc).map_or(
            if crate::compat::is_tegra(cc.pair()) {
                GpuClass::Jetson
            } else {
                GpuClass::Unknown
            },
            |r| r.class,
        ),
        in_table: row.is_some() || cc <= gpus::newest_known_cc(),
        source,
    })
}

impl PlannerFacts {
    /// The machine a fingerprint describes, every fact with its source.
    pub fn from_fingerprint(fp: &Fingerprint, label: &str) -> PlannerFacts {
        let mut gpus_found: Vec<GpuFact> = Vec::new();
        let mut gpus_unknown = None;
        if let Some(n) = fp.nvml.value() {
            gpus_found = n
                .gpus
                .iter()
                .filter_map(|g| {
                    gpu_from_name(&g.name, g.compute_capability, fp.nvml.source().to_string())
                })
                .collect();
        } else if let Some(c) = fp.cuda.value().filter(|c| !c.devices.is_empty()) {
            gpus_found = c
                .devices
                .iter()
                .filter_map(|d| {
                    gpu_from_name(
                        &d.name,
                        Some(d.compute_capability),
                        fp.cuda.source().to_string(),
                    )
                })
                .collect();
        } else if let Some(pci) = fp.pci.value() {
            for d in pci.iter().filter(|d| d.is_nvidia_gpu()) {
                match d.device.and_then(gpus::lookup_pci) {
                    Some(r) => gpus_found.push(GpuFact {
                        name: r.name.clone(),
                        cc: r.cc,
                        class: r.class,
                        in_table: true,
                        source: format!(
                            "PCI {} device 10de:{:04x} (PCI ID table)",
                            d.address,
                            d.device.unwrap_or(0)
                        ),
                    }),
                    None => {
                        gpus_unknown = Some(format!(
                            "PCI device 10de:{:04x} at {} is not in the PCI ID table",
                            d.device.unwrap_or(0),
                            d.address
                        ))
                    }
                }
            }
        } else {
            gpus_unknown = Some(fp.nvml.why_not().unwrap_or("NVML not observed").to_string());
        }
        let jetson = fp.jetson.value().map(|j| JetsonFact {
            jetpack: j.jetpack.as_ref().map(|p| p.version.clone()),
            l4t: j.l4t.as_ref().map(|l| l.version),
        });
        if let (Some(j), true) = (fp.jetson.value(), gpus_found.is_empty()) {
            if let Some(cc) = j
                .compute_capability
                .as_ref()
                .and_then(|c| c.value.parse().ok())
            {
                let name = j
                    .module
                    .as_ref()
                    .and_then(|m| m.name.clone())
                    .or(j.model.clone())
                    .unwrap_or_else(|| "Jetson GPU".into());
                gpus_found.push(GpuFact {
                    name,
                    cc,
                    class: GpuClass::Jetson,
                    in_table: true,
                    source: "Jetson device tree".into(),
                });
                gpus_unknown = None;
            }
        }
        let driver = match &fp.driver.version {
            Observed::Found { value, .. } => DriverFact::Known {
                version: value.clone(),
                note: None,
            },
            Observed::Absent { note, .. } => DriverFact::Absent(note.clone()),
            o => DriverFact::Unknown(o.why_not().unwrap_or("not observed").to_string()),
        };
        let driver_cuda = fp
            .nvml
            .value()
            .map(|n| n.cuda_driver_version)
            .or(fp.cuda.value().map(|c| c.driver_version));
        let python = fp
            .python
            .iter()
            .filter(|e| e.torch.is_some())
            .chain(fp.python.iter())
            .find_map(|e| e.python.as_deref().and_then(parse_python));
        PlannerFacts {
            label: label.to_string(),
            gpus: gpus_found,
            gpus_unknown,
            driver,
            driver_cuda,
            arch: fp.host.arch.value().and_then(|a| Arch::parse(a)),
            python,
            jetson,
        }
    }
}
