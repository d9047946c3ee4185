//! Whether a machine looks like the one a paste came from, and whether the paste's
//! process is the one gpukb observed. Compares the paste's own facts (driver releases, GPU
//! models, PyTorch builds, loaded library versions and paths, environment settings, from
//! [`Signals`]) with a fingerprint's. Pure: signals and a fingerprint in, the agreements
//! and typed [`Difference`]s (each naming both sides) out.

use gpukb_facts::fingerprint::Fingerprint;
use serde::Serialize;

use crate::Signals;

/// What the paste and the machine agree and disagree on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Agreement {
    /// Facts both name alike (`driver 580.159.04`).
    pub agrees: Vec<String>,
    /// Identity facts (driver, GPU, torch) that differ, each naming both values: the
    /// paste may come from another machine.
    pub contradicts: Vec<String>,
    /// Every fact that differs, typed; the process-level ones (a loaded library, a
    /// library path, an environment setting) say the failing process is not the one
    /// gpukb observed.
    pub differs: Vec<Difference>,
    /// Set when the machine has no NVIDIA GPU at all, so it cannot be the paste's.
    pub no_nvidia_gpu: bool,
}

/// Which fact of the paste differs from the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum PasteFact {
    /// The driver release.
    Driver,
    /// The GPU model.
    Gpu,
    /// The PyTorch build.
    Torch,
    /// The version of a library the process loaded (family: `cudnn`, `nccl`).
    LoadedLibrary(String),
    /// Where a library (by file name) was loaded from.
    LibraryPath(String),
    /// A library (by file name) the paste's process could not open.
    MissingLibrary(String),
    /// An environment variable of the process.
    Env(String),
}

/// One fact on which the paste and the machine (or gpukb's model of it) differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    /// What differs.
    pub fact: PasteFact,
    /// The paste's value.
    pub paste: String,
    /// The machine's value, as gpukb observed or modelled it.
    pub machine: String,
}

impl Difference {
    /// Whether it says the paste comes from another machine (driver, GPU, torch), not
    /// only from another process on this one.
    pub fn is_identity(&self) -> bool {
        matches!(
            self.fact,
            PasteFact::Driver | PasteFact::Gpu | PasteFact::Torch
        )
    }

    /// One sentence naming both sides.
    pub fn sentence(&self) -> String {
        let (p, m) = (&self.paste, &self.machine);
        match &self.fact {
            PasteFact::Driver => format!("the paste names driver {p}, this machine runs {m}"),
            PasteFact::Gpu => format!("the paste names {p}, this machine has {m}"),
            PasteFact::Torch => format!("the paste names torch {p}, this machine has {m}"),
            PasteFact::LoadedLibrary(l) => {
                format!("the paste says the process loaded {l} {p}; gpukb's loader model has {m}")
            }
            PasteFact::LibraryPath(f) => {
                format!("the paste shows {f} at {p}; gpukb's loader model loads {m}")
            }
            PasteFact::MissingLibrary(f) => {
                format!("the paste's process could not open {f}; gpukb's model of torch's loader finds it at {m}")
            }
            PasteFact::Env(v) => format!("the paste shows {v}={p}; gpukb observed {m}"),
        }
    }
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
    identity(s, fp, &mut a);
    a.contradicts = a.differs.iter().map(Difference::sentence).collect();
    loaded_libraries(s, fp, &mut a);
    library_paths(s, fp, &mut a);
    missing_libraries(s, fp, &mut a);
    env_settings(s, fp, &mut a);
    a
}

/// A library the paste's process could not open that gpukb's model of torch's loader
/// resolves here: the failing process is not the one modelled (another program or
/// extension with its own search path, another environment), so no check that rests on
/// the model may rule out the library's absence for it.
fn missing_libraries(s: &Signals, fp: &Fingerprint, a: &mut Agreement) {
    let loads = modelled_loads(fp);
    for name in &s.missing_libraries {
        let Some((so, Some(path), _)) = loads.iter().find(|(so, _, _)| so == name) else {
            continue;
        };
        a.differ(
            PasteFact::MissingLibrary(so.to_string()),
            "not found".into(),
            path.to_string(),
        );
    }
}

impl Agreement {
    fn differ(&mut self, fact: PasteFact, paste: String, machine: String) {
        self.differs.push(Difference {
            fact,
            paste,
            machine,
        });
    }
}

/// Driver, GPU and torch: whether the paste comes from this machine at all.
fn identity(s: &Signals, fp: &Fingerprint, a: &mut Agreement) {
    let drivers = machine_drivers(fp);
    if !s.driver_versions.is_empty() && !drivers.is_empty() {
        match s.driver_versions.iter().find(|v| drivers.contains(*v)) {
            Some(v) => a.agrees.push(format!("driver {v}")),
            None => a.differ(
                PasteFact::Driver,
                s.driver_versions.join(", "),
                drivers.join(", "),
            ),
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
            None => a.differ(PasteFact::Gpu, s.gpu_models.join(", "), gpus.join(", ")),
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
            None => a.differ(
                PasteFact::Torch,
                s.torch_versions.join(", "),
                torches.join(", "),
            ),
        }
    }
}

/// The CUDA libraries gpukb's loader model says torch loads: (file name, path, version).
fn modelled_loads(fp: &Fingerprint) -> Vec<(&str, Option<&str>, Option<&str>)> {
    fp.python
        .iter()
        .filter_map(|p| p.torch.as_ref())
        .flat_map(|t| t.loads.iter())
        .map(|l| (l.soname.as_str(), l.path.as_deref(), l.version.as_deref()))
        .collect()
}

/// The first three numeric parts of a version (`9.19.0.56` → `9.19.0`).
fn three(v: &str) -> String {
    v.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .take(3)
        .collect::<Vec<_>>()
        .join(".")
}

/// A library version the paste says its process loaded, against the model's.
fn loaded_libraries(s: &Signals, fp: &Fingerprint, a: &mut Agreement) {
    let loads = modelled_loads(fp);
    for l in &s.loaded_libraries {
        let family = format!("lib{}", l.library);
        let known: Vec<(&str, &str)> = loads
            .iter()
            .filter(|(so, _, _)| so.starts_with(&family))
            .filter_map(|(so, _, v)| v.map(|v| (*so, v)))
            .collect();
        if known.is_empty() {
            continue;
        }
        if known.iter().any(|(_, v)| three(v) == three(&l.version)) {
            a.agrees.push(format!("{} {}", l.library, l.version));
            continue;
        }
        let (so, v) = known[0];
        a.differ(
            PasteFact::LoadedLibrary(l.library.clone()),
            l.version.clone(),
            format!("torch loads {so} {v}"),
        );
    }
}

/// The same directory, `/lib` and `/usr/lib` alike (merged /usr).
fn same_dir(a: &str, b: &str) -> bool {
    let norm = |p: &str| {
        let d = p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        d.strip_prefix("/usr").map(String::from).unwrap_or(d)
    };
    norm(a) == norm(b)
}

/// A library path the paste shows, against where the model loads that file name from.
fn library_paths(s: &Signals, fp: &Fingerprint, a: &mut Agreement) {
    let loads = modelled_loads(fp);
    for p in &s.library_paths {
        let file = p.rsplit('/').next().unwrap_or(p);
        let Some((so, Some(path), _)) = loads.iter().find(|(so, _, _)| *so == file) else {
            continue;
        };
        if !same_dir(p, path) {
            a.differ(
                PasteFact::LibraryPath(so.to_string()),
                p.clone(),
                path.to_string(),
            );
        }
    }
}

/// An environment setting the paste shows, against the observed process's.
fn env_settings(s: &Signals, fp: &Fingerprint, a: &mut Agreement) {
    for e in &s.env_settings {
        let have = fp.env.iter().find(|v| v.name == e.name);
        // The paste's normalisation may have cut a long hex run (a UUID's tail).
        let same = have.is_some_and(|h| {
            h.value == e.value || (!e.value.is_empty() && h.value.starts_with(&e.value))
        });
        if same {
            a.agrees.push(format!("{}={}", e.name, e.value));
        } else {
            let machine = have.map_or(format!("{} not set", e.name), |h| {
                format!("{}={}", h.name, h.value)
            });
            a.differ(PasteFact::Env(e.name.clone()), e.value.clone(), machine);
        }
    }
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
            gpukb_doctor::View::new(fp)
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
