//! A fingerprint seen as the stack users talk about: a flat map from stable
//! fact keys (`driver.version`, `gpu[0].uuid`,
//! `python[/opt/venv].torch.version`) to what was observed, with the chain
//! layer each fact belongs to. The `diff` module compares two of these.
//!
//! Observed values keep their state: a found value, a source seen to hold
//! nothing (absent), and a source that could not be read or looked at
//! (unknown, with the reason) are three different [`Fact`]s. Unknown facts
//! are never compared.

use gpukb_doctor::Layer;
use gpukb_facts::{Fingerprint, Observed};
use std::collections::BTreeMap;

/// One stack fact as observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// Found, rendered as users read it.
    Value(String),
    /// The source was seen to hold nothing.
    Absent,
    /// The source failed or this mode cannot see it (the reason).
    Unknown(String),
}

impl Fact {
    fn of<T>(o: &Observed<T>, show: impl FnOnce(&T) -> String) -> Fact {
        match o {
            Observed::Found { value, .. } => Fact::Value(show(value)),
            Observed::Absent { .. } => Fact::Absent,
            Observed::Failed { error, .. } => Fact::Unknown(error.clone()),
            Observed::Unobservable { reason, .. } => Fact::Unknown(reason.clone()),
        }
    }
    /// The value, `None` when absent or unknown.
    pub fn value(&self) -> Option<&str> {
        match self {
            Fact::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// One entry of the map: what users call it, the layer, and the fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackFact {
    pub label: String,
    pub layers: Vec<Layer>,
    pub fact: Fact,
}

/// The stack of one fingerprint.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// Fact key → fact.
    pub facts: BTreeMap<String, StackFact>,
    /// Key prefixes this fingerprint could not enumerate (`gpu[` when NVML
    /// did not answer), with the reason: a key missing under one of them is
    /// unknown, not absent.
    pub unknown_scopes: Vec<(String, String)>,
}

impl Stack {
    fn put(
        &mut self,
        key: impl Into<String>,
        label: impl Into<String>,
        layers: &[Layer],
        fact: Fact,
    ) {
        self.facts.insert(
            key.into(),
            StackFact {
                label: label.into(),
                layers: layers.to_vec(),
                fact,
            },
        );
    }

    /// What this stack says about `key`: the fact, or `Absent` /
    /// `Unknown` when the key is missing.
    pub fn get(&self, key: &str) -> Fact {
        if let Some(f) = self.facts.get(key) {
            return f.fact.clone();
        }
        match self
            .unknown_scopes
            .iter()
            .find(|(p, _)| key.starts_with(p.as_str()))
        {
            Some((_, why)) => Fact::Unknown(why.clone()),
            None => Fact::Absent,
        }
    }
}

fn joined(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(" ")
    }
}

/// Flattens `fp` into its stack facts.
pub fn of(fp: &Fingerprint) -> Stack {
    use Layer::*;
    let mut s = Stack::default();
    s.put(
        "host.os",
        "OS",
        &[Hardware],
        Fact::of(&fp.host.os, |v| v.clone()),
    );
    s.put(
        "host.kernel",
        "Linux kernel",
        &[KernelDriver],
        Fact::of(&fp.host.kernel, |v| v.clone()),
    );
    s.put(
        "host.container",
        "container",
        &[ContainerWsl],
        Fact::of(&fp.host.container, |v| v.clone()),
    );
    s.put(
        "driver.version",
        "kernel driver (loaded module)",
        &[KernelDriver],
        Fact::of(&fp.driver.version, |v| v.to_string()),
    );
    s.put(
        "driver.flavor",
        "kernel module flavour",
        &[KernelDriver],
        Fact::of(&fp.driver.flavor, |v| v.clone()),
    );
    s.put(
        "driver.modules",
        "kernel modules loaded",
        &[KernelDriver],
        Fact::of(&fp.driver.modules, |m| {
            let mut names: Vec<String> = m
                .iter()
                .filter(|m| m.loaded)
                .map(|m| m.name.clone())
                .collect();
            names.sort();
            joined(&names)
        }),
    );
    s.put(
        "driver.userspace_version",
        "driver user-space (libcuda)",
        &[KernelDriver, CudaDriver],
        match &fp.driver.libcuda {
            Observed::Found { value, .. } => match &value.version {
                Some(v) => Fact::Value(v.clone()),
                None => Fact::Unknown(format!("{} has no version in its name", value.real_path)),
            },
            o => Fact::of(o, |_| String::new()),
        },
    );
    s.put(
        "driver.libcuda",
        "libcuda that loads",
        &[CudaDriver, ContainerWsl],
        Fact::of(&fp.driver.libcuda, |l| l.real_path.clone()),
    );
    let cuda_version = match (&fp.cuda, &fp.nvml) {
        (Observed::Found { value, .. }, _) => Fact::Value(value.driver_version.to_string()),
        (_, Observed::Found { value, .. }) => Fact::Value(value.cuda_driver_version.to_string()),
        (c, _) => Fact::of(c, |_| String::new()),
    };
    s.put(
        "driver.cuda_version",
        "CUDA version the driver supports",
        &[CudaDriver],
        cuda_version,
    );
    gpus(fp, &mut s);
    libraries(fp, &mut s);
    python(fp, &mut s);
    jetson(fp, &mut s);
    s
}

fn gpus(fp: &Fingerprint, s: &mut Stack) {
    use Layer::*;
    match &fp.nvml {
        Observed::Found { value, .. } => {
            s.put(
                "gpu.count",
                "GPUs NVML sees",
                &[Hardware],
                Fact::Value(value.gpus.len().to_string()),
            );
            for g in &value.gpus {
                let k = |f: &str| format!("gpu[{}].{f}", g.index);
                let l = |f: &str| format!("GPU {} {f}", g.index);
                s.put(
                    k("name"),
                    l("model"),
                    &[Hardware],
                    Fact::Value(g.name.clone()),
                );
                s.put(
                    k("uuid"),
                    l("UUID"),
                    &[Hardware],
                    Fact::Value(g.uuid.clone()),
                );
                if let Some(cc) = &g.compute_capability {
                    s.put(
                        k("compute_capability"),
                        l("compute capability"),
                        &[Hardware, KernelImage],
                        Fact::Value(cc.to_string()),
                    );
                }
                if let Some(m) = g.mig_enabled {
                    let v = match (m, g.mig_instances) {
                        (false, _) => "disabled".to_string(),
                        (true, Some(n)) => format!("enabled, {n} instances"),
                        (true, None) => "enabled".to_string(),
                    };
                    s.put(k("mig"), l("MIG mode"), &[Hardware], Fact::Value(v));
                }
            }
        }
        o => {
            s.put(
                "gpu.count",
                "GPUs NVML sees",
                &[Hardware],
                Fact::of(o, |_| String::new()),
            );
            if let Some(why) = o.why_not().filter(|_| o.is_unknown()) {
                s.unknown_scopes.push(("gpu[".into(), why.to_string()));
            }
        }
    }
}

fn libraries(fp: &Fingerprint, s: &mut Stack) {
    let mut by_soname: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in &fp.libraries.files {
        let shown = match &f.version {
            Some(v) => format!("{v} ({})", f.real_path),
            None => f.real_path.clone(),
        };
        by_soname.entry(f.soname.as_str()).or_default().push(shown);
    }
    for (soname, mut copies) in by_soname {
        copies.sort();
        copies.dedup();
        s.put(
            format!("library[{soname}]"),
            format!("{soname} copies on the loader path"),
            &[Layer::CudaLibraries],
            Fact::Value(copies.join(", ")),
        );
    }
    for t in &fp.libraries.toolkits {
        s.put(
            format!("toolkit[{}].version", t.path),
            format!("CUDA toolkit at {}", t.path),
            &[Layer::CudaLibraries],
            Fact::of(&t.version, |v| v.clone()),
        );
    }
}

fn python(fp: &Fingerprint, s: &mut Stack) {
    use Layer::*;
    for env in &fp.python {
        let k = |f: &str| format!("python[{}].{f}", env.site_packages);
        let l = |f: &str| format!("{f} in {}", env.site_packages);
        let Some(t) = &env.torch else {
            s.put(k("torch.version"), l("torch"), &[Framework], Fact::Absent);
            continue;
        };
        s.put(
            k("torch.version"),
            l("torch"),
            &[Framework],
            Fact::Value(t.version.clone()),
        );
        s.put(
            k("torch.cuda"),
            l("torch's CUDA"),
            &[Framework, CudaDriver],
            match &t.cuda {
                Some(c) => Fact::Value(c.to_string()),
                None => Fact::Value("none (CPU-only build)".into()),
            },
        );
        s.put(
            k("torch.archs"),
            l("torch's compiled GPU code"),
            &[KernelImage, Framework],
            Fact::of(&t.kernels, |k| {
                let mut all = k.sass.clone();
                all.extend(k.ptx.iter().cloned());
                joined(&all)
            }),
        );
        for r in &t.loads {
            s.put(
                k(&format!("torch.loads[{}]", r.soname)),
                l(&format!("{} torch loads", r.soname)),
                &[CudaLibraries, Framework],
                match &r.path {
                    Some(p) => Fact::Value(match &r.version {
                        Some(v) => format!("{v} ({p})"),
                        None => p.clone(),
                    }),
                    None => Fact::Absent,
                },
            );
        }
        for p in env.nvidia_wheels.iter().chain(&env.cuda_packages) {
            s.put(
                k(&format!("package[{}]", p.name)),
                l(&p.name),
                &[CudaLibraries, Framework],
                Fact::Value(p.version.clone()),
            );
        }
        for x in &env.extensions {
            s.put(
                k(&format!("extension[{}].archs", x.package)),
                l(&format!("{}'s compiled GPU code", x.package)),
                &[KernelImage],
                Fact::of(&x.kernels, |k| {
                    let mut all = k.sass.clone();
                    all.extend(k.ptx.iter().cloned());
                    joined(&all)
                }),
            );
        }
    }
}

fn jetson(fp: &Fingerprint, s: &mut Stack) {
    let j = match &fp.jetson {
        Observed::Found { value, .. } => value,
        Observed::Absent { .. } => return,
        o => {
            s.put(
                "jetson.l4t",
                "L4T release",
                &[Layer::Jetson],
                Fact::of(o, |_| String::new()),
            );
            return;
        }
    };
    let put = |s: &mut Stack, key: &str, label: &str, v: Option<String>| {
        s.put(
            key,
            label,
            &[Layer::Jetson],
            v.map(Fact::Value).unwrap_or(Fact::Absent),
        );
    };
    put(s, "jetson.model", "Jetson module", j.model.clone());
    put(
        s,
        "jetson.l4t",
        "L4T release",
        j.l4t.as_ref().map(|l| l.version.to_string()),
    );
    put(
        s,
        "jetson.jetpack",
        "JetPack",
        j.jetpack.as_ref().map(|p| p.version.clone()),
    );
    put(
        s,
        "jetson.cuda",
        "JetPack CUDA",
        j.cuda.as_ref().map(|c| c.value.clone()),
    );
    put(
        s,
        "jetson.cudnn",
        "JetPack cuDNN",
        j.cudnn.as_ref().map(|c| c.value.clone()),
    );
    put(
        s,
        "jetson.tensorrt",
        "TensorRT",
        j.tensorrt.as_ref().map(|c| c.value.clone()),
    );
    put(
        s,
        "jetson.nvpmodel",
        "nvpmodel power mode",
        j.power_mode.as_ref().and_then(|p| match (&p.id, &p.name) {
            (Some(id), Some(n)) => Some(format!("{id} ({n})")),
            (Some(id), None) => Some(id.to_string()),
            (None, Some(n)) => Some(n.clone()),
            (None, None) => None,
        }),
    );
}
