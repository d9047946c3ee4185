//! Turns a machine's fingerprint into the facts the knowledge base's rules
//! read, from this machine, a fingerprint JSON file or a replayed capture.

use anyhow::Context;
use gpukb_agent::fingerprint::{Fingerprint, Observed};
use gpukb_kb::facts::{GpuFacts, JetsonFacts, LibFacts, MachineFacts, TorchFacts};
use std::path::PathBuf;

/// Where `search` gets machine facts from.
#[derive(Debug, Clone)]
pub enum FactsSource {
    /// Detect on this machine.
    Detect,
    /// A fingerprint JSON written by `gpukb fingerprint --json`.
    FingerprintFile(PathBuf),
    /// A capture directory written by `gpukb capture`.
    Replay(PathBuf),
    /// Do not use machine facts.
    None,
}

/// Loads machine facts for the knowledge base's rules.
pub fn load_facts(source: &FactsSource) -> anyhow::Result<Option<MachineFacts>> {
    let fp = match source {
        FactsSource::None => return Ok(None),
        FactsSource::Detect => crate::machine::fingerprint(&crate::machine::MachineArgs {
            root: None,
            replay: None,
            timeout: 3.0,
        })?,
        FactsSource::Replay(dir) => crate::machine::fingerprint(&crate::machine::MachineArgs {
            root: None,
            replay: Some(dir.clone()),
            timeout: 3.0,
        })?,
        FactsSource::FingerprintFile(path) => read_fingerprint(path)?,
    };
    Ok(Some(machine_facts(&fp)))
}

#[allow(clippy::disallowed_methods)] // a file the user named, not machine state
fn read_fingerprint(path: &PathBuf) -> anyhow::Result<Fingerprint> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(
        meta.len() < 64 << 20,
        "{} is too large for a fingerprint",
        path.display()
    );
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| {
        format!(
            "{} is not a gpukb fingerprint (write one with `gpukb fingerprint --json`)",
            path.display()
        )
    })
}

fn cc(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The rules' view of a fingerprint.
pub fn machine_facts(fp: &Fingerprint) -> MachineFacts {
    let mut f = MachineFacts {
        driver_version: fp.driver.version.value().cloned(),
        driver_cuda: fp
            .nvml
            .value()
            .map(|n| n.cuda_driver_version.clone())
            .or_else(|| fp.cuda.value().map(|c| c.driver_version.clone()))
            .and_then(|v| cc(&v)),
        ..Default::default()
    };
    if let Some(mods) = fp.driver.modules.value() {
        let loaded = |n: &str| mods.iter().any(|m| m.name == n && m.loaded);
        // A Jetson's integrated GPU is driven by nvgpu, not nvidia.ko.
        f.kernel_module_loaded = (!fp.jetson.is_found()).then(|| loaded("nvidia"));
        f.nouveau_loaded = Some(loaded("nouveau"));
        f.uvm_loaded = Some(loaded("nvidia_uvm"));
    } else if matches!(fp.driver.version, Observed::Absent { .. })
        && fp.host.kernel.is_found()
        && !fp.jetson.is_found()
    {
        // /proc was visible and shows no nvidia module. (A copied root
        // filesystem has no /proc, and a Jetson's iGPU uses nvgpu instead.)
        f.kernel_module_loaded = Some(false);
    }
    if let Some(n) = fp.nvml.value() {
        f.gpus = n
            .gpus
            .iter()
            .map(|g| GpuFacts {
                name: g.name.clone(),
                cc: g.compute_capability.as_deref().and_then(cc),
                pcie_gen_current: g.pcie_gen_current,
                pcie_gen_max: g.pcie_gen_max,
                pcie_width_current: g.pcie_width_current,
                pcie_width_max: g.pcie_width_max,
                ecc_uncorrected: g.ecc_uncorrected_aggregate,
                remapped_rows_failed: g.remapped_rows.as_ref().map(|r| r.failed),
                mig_enabled: g.mig_enabled,
                throttle_reasons: g.throttle_reasons.clone().unwrap_or_default(),
            })
            .collect();
    } else if let Some(c) = fp.cuda.value() {
        f.gpus = c
            .devices
            .iter()
            .map(|d| GpuFacts {
                name: d.name.clone(),
                cc: cc(&d.compute_capability),
                ..Default::default()
            })
            .collect();
    } else if let Some(j) = fp.jetson.value() {
        if let Some(c) = j.compute_capability.as_ref().and_then(|c| cc(&c.value)) {
            f.gpus.push(GpuFacts {
                name: j.model.clone().unwrap_or_else(|| "Jetson GPU".into()),
                cc: Some(c),
                ..Default::default()
            });
        }
    }
    f.torch = fp
        .python
        .iter()
        .filter_map(|e| e.torch.as_ref())
        .map(|t| TorchFacts {
            version: t.version.clone(),
            cuda: t.cuda.clone(),
            sass: t
                .kernels
                .value()
                .map(|k| k.sass.clone())
                .unwrap_or_default(),
            ptx: t.kernels.value().map(|k| k.ptx.clone()).unwrap_or_default(),
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    f.libraries = fp
        .libraries
        .files
        .iter()
        .filter(|l| seen.insert(l.real_path.clone()))
        .map(|l| LibFacts {
            name: l.family.clone(),
            version: l.version.clone(),
            path: l.real_path.clone(),
        })
        .collect();
    f.env = fp
        .env
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect();
    f.container = fp.host.container.value().cloned();
    f.wsl = fp.host.wsl.is_found();
    f.secure_boot = fp.host.secure_boot.value().copied();
    f.jetson = fp.jetson.value().map(|j| JetsonFacts {
        l4t: j.l4t.as_ref().map(|l| l.version.to_string()),
        jetpack: j.jetpack.as_ref().map(|p| p.version.clone()),
        module: j.module.as_ref().and_then(|m| m.name.clone()),
        power_mode: j.power_mode.as_ref().and_then(|p| p.name.clone()),
    });
    f.nvml_error = match &fp.nvml {
        Observed::Failed { error, .. } => Some(error.clone()),
        Observed::Absent { note, .. } => Some(note.clone()),
        Observed::Found { .. } => None,
    };
    f.cuda_init = fp.cuda.value().map(|c| c.init.clone());
    f
}
