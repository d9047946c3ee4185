//! Whether a machine looks like the one a paste came from. Compares the paste's own facts
//! (driver releases, GPU models, PyTorch builds, from [`Signals`]) with a fingerprint's, so
//! that search applies detected facts only to a paste from this machine. Pure: signals and
//! a fingerprint in, the agreements and contradictions (sentences naming both sides) out.

use gpukb_facts::fingerprint::Fingerprint;
use serde::Serialize;

use crate::Signals;

/// What the paste and the machine agree and disagree on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Agreement {
    /// Facts both name alike (`driver 580.159.04`).
    pub agrees: Vec<String>,
    /// Facts that differ, each naming the paste's and the machine's value.
    pub contradicts: Vec<String>,
    /// Set when the machine has no NVIDIA GPU at all, so it cannot be the paste's.
    pub no_nvidia_gpu: bool,
}

impl Agreement {
    /// One sentence for why detected facts are not used, when they are not.
    pub fn reason_not_applied(&self) -> Option<String> {
        if self.no_nvidia_gpu {
            return Some(
                "this machine has no NVIDIA GPU, so it is not the one in the paste; ranking on text"
                    .into(),
            );
        }
        if self.contradicts.is_empty() {
            return None;
        }
        Some(format!(
            "this machine does not look like the one in the paste ({}); ranking on text",
            self.contradicts.join("; ")
        ))
    }
}

/// Compares the paste's facts with the machine's.
pub fn compare(s: &Signals, fp: &Fingerprint) -> Agreement {
    let mut a = Agreement {
        no_nvidia_gpu: has_no_nvidia_gpu(fp),
        ..Agreement::default()
    };
    let drivers = machine_drivers(fp);
    if !s.driver_versions.is_empty() && !drivers.is_empty() {
        match s.driver_versions.iter().find(|v| drivers.contains(*v)) {
            Some(v) => a.agrees.push(format!("driver {v}")),
            None => a.contradicts.push(format!(
                "the paste names driver {}, this machine runs {}",
                s.driver_versions.join(", "),
                drivers.join(", ")
            )),
        }
    }
    let gpus = machine_gpu_names(fp);
    if !s.gpu_models.is_empty() && !gpus.is_empty() {
        let hit = s
            .gpu_models
            .iter()
            .find(|m| gpus.iter().any(|g| names_model(g, m)));
        match hit {
            Some(m) => a.agrees.push(format!("GPU {m}")),
            None => a.contradicts.push(format!(
                "the paste names {}, this machine has {}",
                s.gpu_models.join(", "),
                gpus.join(", ")
            )),
        }
    }
    let torches: Vec<&str> = fp
        .python
        .iter()
        .filter_map(|p| p.torch.as_ref().map(|t| t.version.as_str()))
        .collect();
    if !s.torch_versions.is_empty() && !torches.is_empty() {
        let hit = s
            .torch_versions
            .iter()
            .find(|v| torches.iter().any(|t| same_torch(t, v)));
        match hit {
            Some(v) => a.agrees.push(format!("torch {v}")),
            None => a.contradicts.push(format!(
                "the paste names torch {}, this machine has {}",
                s.torch_versions.join(", "),
                torches.join(", ")
            )),
        }
    }
    a
}

/// Driver releases this machine reports (kernel module and NVML).
fn machine_drivers(fp: &Fingerprint) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(v) = fp.driver.version.value() {
        out.push(v.as_str().to_string());
    }
    if let Some(n) = fp.nvml.value() {
        let v = n.driver_version.as_str().to_string();
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// GPU names NVML or the CUDA driver API report; when neither was loaded (search's
/// cheap detection), the names the GPU table gives the PCI devices.
fn machine_gpu_names(fp: &Fingerprint) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(n) = fp.nvml.value() {
        out.extend(n.gpus.iter().map(|g| g.name.clone()));
    }
    if let Some(c) = fp.cuda.value() {
        out.extend(c.devices.iter().map(|d| d.name.clone()));
    }
    if out.is_empty() {
        out.extend(
            crate::diagnose::View::new(fp)
                .gpus()
                .into_iter()
                .map(|g| g.name),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// Whether the machine's PCI bus was read and shows no NVIDIA device, and NVML sees none.
fn has_no_nvidia_gpu(fp: &Fingerprint) -> bool {
    let pci_none = fp
        .pci
        .value()
        .is_some_and(|d| !d.iter().any(|p| p.vendor == 0x10de));
    let nvml_none = fp.nvml.value().is_none_or(|n| n.gpus.is_empty());
    let tegra = fp.jetson.value().is_some();
    pci_none && nvml_none && !tegra
}

/// Whether GPU name `name` ("NVIDIA GeForce RTX 4090") is model `model` ("rtx 4090"):
/// the model's words appear in the name as consecutive words.
fn names_model(name: &str, model: &str) -> bool {
    let words: Vec<String> = name
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    let m: Vec<&str> = model.split(' ').collect();
    // "RTX 4090" may be written "RTX4090" in a name.
    let joined: Vec<String> = words
        .windows(2)
        .map(|w| format!("{}{}", w[0], w[1]))
        .collect();
    words
        .windows(m.len())
        .any(|w| w.iter().zip(&m).all(|(a, b)| a == b))
        || (m.len() == 2 && joined.iter().any(|j| *j == format!("{}{}", m[0], m[1])))
        || (m.len() == 1 && joined.iter().any(|j| j == m[0]))
}

/// Whether the machine's torch `have` ("2.5.1+cu124") is the paste's `named` ("2.5.1" or
/// "2.5.1+cu124"): the same release, and the same variant when the paste names one.
fn same_torch(have: &str, named: &str) -> bool {
    let have = have.to_ascii_lowercase();
    match named.split_once('+') {
        Some(_) => have == named,
        None => have.split('+').next() == Some(named),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_words_match_whole_words_only() {
        assert!(names_model("NVIDIA GeForce RTX 4090", "rtx 4090"));
        assert!(names_model("NVIDIA A100-SXM4-80GB", "a100"));
        assert!(names_model("Tesla T4", "t4"));
        assert!(!names_model("NVIDIA GeForce RTX 4090", "t4"));
        assert!(!names_model("NVIDIA GeForce RTX 4090", "rtx 4080"));
        assert!(names_model("NVIDIA H200", "h200"));
        assert!(!names_model("NVIDIA H200", "h100"));
    }

    #[test]
    fn torch_releases_compare_with_and_without_variant() {
        assert!(same_torch("2.5.1+cu124", "2.5.1"));
        assert!(same_torch("2.5.1+cu124", "2.5.1+cu124"));
        assert!(!same_torch("2.5.1+cu124", "2.5.1+cu121"));
        assert!(!same_torch("2.11.0+cu130", "2.1.0"));
    }
}
