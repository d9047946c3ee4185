//! A read-only view over a fingerprint that answers the questions checks ask
//! (which GPUs, which modules are loaded, which torch is active), keeping
//! found / absent / could-not-observe apart and the source of each answer;
//! and the per-layer status the doctor prints.

use super::{Evidence, Finding, Layer, LayerReport, Severity, Status};
use gpukb_facts::fingerprint::{FrameworkBuild, PciDevice, PythonEnv, TorchInstall};
use gpukb_facts::{ComputeCapability, CudaVersion, Fingerprint, Observed, Source};

/// One GPU as the checks see it.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub cc: Option<ComputeCapability>,
    pub source: Source,
}

/// The fingerprint, with answers to the checks' questions.
pub struct View<'a> {
    pub fp: &'a Fingerprint,
    /// What `gpukb probe` measured, when it ran.
    pub probe: Option<&'a gpukb_facts::measured::ProbeEvidence>,
}

impl<'a> View<'a> {
    pub fn new(fp: &'a Fingerprint) -> Self {
        View { fp, probe: None }
    }
    pub fn with_probe(
        fp: &'a Fingerprint,
        probe: Option<&'a gpukb_facts::measured::ProbeEvidence>,
    ) -> Self {
        View { fp, probe }
    }

    /// GPUs: NVML's list, else the CUDA driver's devices, else a Jetson's iGPU.
    pub fn gpus(&self) -> Vec<Gpu> {
        if let Observed::Found { value, source } = &self.fp.nvml {
            if !value.gpus.is_empty() {
                return value
                    .gpus
                    .iter()
                    .map(|g| Gpu {
                        index: g.index,
                        name: g.name.clone(),
                        uuid: g.uuid.clone(),
                        cc: g.compute_capability,
                        source: source.clone(),
                    })
                    .collect();
            }
        }
        if let Observed::Found { value, source } = &self.fp.cuda {
            if !value.devices.is_empty() {
                return value
                    .devices
                    .iter()
                    .map(|d| Gpu {
                        index: d.ordinal,
                        name: d.name.clone(),
                        uuid: String::new(),
                        cc: Some(d.compute_capability),
                        source: source.clone(),
                    })
                    .collect();
            }
        }
        if let Some(j) = self.fp.jetson.value() {
            if let Some(cc) = &j.compute_capability {
                return vec![Gpu {
                    index: 0,
                    name: j.model.clone().unwrap_or_else(|| "Jetson GPU".into()),
                    uuid: String::new(),
                    cc: cc.value.parse().ok(),
                    source: self.fp.jetson.source().clone(),
                }];
            }
        }
        self.pci_table_gpus()
    }

    /// When neither NVML nor the CUDA driver API was loaded (search's cheap
    /// detection), the GPUs on the PCI bus named by the GPU table (PCI device id →
    /// model and compute capability). Not used when either was loaded and failed:
    /// a GPU the driver cannot see is then a finding, not a table row.
    fn pci_table_gpus(&self) -> Vec<Gpu> {
        let unloaded = matches!(self.fp.nvml, Observed::Unobservable { .. })
            && matches!(self.fp.cuda, Observed::Unobservable { .. });
        if !unloaded {
            return Vec::new();
        }
        let Some(pci) = self.pci_gpus() else {
            return Vec::new();
        };
        let bus = self.fp.pci.source().to_string();
        pci.iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let row = gpukb_facts::gpus::lookup_pci(p.device?)?;
                Some(Gpu {
                    index: i as u32,
                    name: row.name.clone(),
                    uuid: String::new(),
                    cc: Some(row.cc),
                    source: Source::Derived {
                        from: format!(
                            "PCI device {:04x} at {} ({bus}) in gpukb's GPU table",
                            p.device.unwrap_or_default(),
                            p.address
                        ),
                    },
                })
            })
            .collect()
    }

    /// NVIDIA GPUs on the PCI bus; `None` when the PCI bus was not observed.
    pub fn pci_gpus(&self) -> Option<Vec<&PciDevice>> {
        self.fp
            .pci
            .value()
            .map(|d| d.iter().filter(|p| p.is_nvidia_gpu()).collect())
    }

    /// NVSwitches on the PCI bus.
    pub fn nvswitches(&self) -> usize {
        self.fp
            .pci
            .value()
            .map_or(0, |d| d.iter().filter(|p| p.is_nvswitch()).count())
    }

    /// Whether kernel module `name` is loaded; `None` when `/proc/modules` was
    /// not observed (a copied root has no /proc).
    pub fn module_loaded(&self, name: &str) -> Option<bool> {
        self.fp
            .driver
            .modules
            .value()
            .map(|m| m.iter().any(|x| x.name == name && x.loaded))
    }

    /// The source of the module list.
    pub fn modules_source(&self) -> &Source {
        self.fp.driver.modules.source()
    }

    /// An environment variable that is set.
    pub fn env(&self, name: &str) -> Option<&str> {
        self.fp
            .env
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value.as_str())
    }

    /// The highest CUDA version the driver supports, and who said so.
    pub fn driver_cuda(&self) -> Option<(CudaVersion, Source)> {
        if let Observed::Found { value, source } = &self.fp.nvml {
            return Some((value.cuda_driver_version, source.clone()));
        }
        if let Observed::Found { value, source } = &self.fp.cuda {
            return Some((value.driver_version, source.clone()));
        }
        self.driver_cuda_from_branch()
    }

    /// When neither NVML nor the CUDA driver API was loaded: the highest CUDA
    /// the kernel module's branch runs natively, from the driver-branch table
    /// (a branch newer than the table runs at least the newest CUDA it knows).
    fn driver_cuda_from_branch(&self) -> Option<(CudaVersion, Source)> {
        let unloaded = matches!(self.fp.nvml, Observed::Unobservable { .. })
            && matches!(self.fp.cuda, Observed::Unobservable { .. });
        let Observed::Found { value, source } = &self.fp.driver.version else {
            return None;
        };
        if !unloaded {
            return None;
        }
        let cuda = match gpukb_facts::compat::branch_cuda(value.branch()) {
            gpukb_facts::compat::BranchCuda::Known(v) => v,
            gpukb_facts::compat::BranchCuda::NewerThanData { .. } => {
                let (_, (a, b)) = gpukb_facts::compat::BRANCH_CUDA.last()?;
                CudaVersion::new(*a, *b)
            }
            gpukb_facts::compat::BranchCuda::OlderThanData => return None,
        };
        Some((
            cuda,
            Source::Derived {
                from: format!("driver {value} ({source}) and gpukb's driver-branch table"),
            },
        ))
    }

    pub fn is_jetson(&self) -> bool {
        self.fp.jetson.is_found()
    }

    pub fn container(&self) -> Option<&str> {
        self.fp.host.container.value().map(String::as_str)
    }

    pub fn is_wsl(&self) -> bool {
        self.fp.host.wsl.is_found()
    }

    /// Every torch install, with its env.
    pub fn torches(&self) -> Vec<(&'a PythonEnv, &'a TorchInstall)> {
        self.fp
            .python
            .iter()
            .filter_map(|e| e.torch.as_ref().map(|t| (e, t)))
            .collect()
    }

    /// Every framework build other than torch (JAX, CuPy, TensorFlow, ONNX
    /// Runtime, TensorRT), with its env.
    pub fn frameworks(&self) -> Vec<(&'a PythonEnv, &'a FrameworkBuild)> {
        self.fp
            .python
            .iter()
            .flat_map(|e| e.frameworks.iter().map(move |f| (e, f)))
            .collect()
    }

    /// The framework build a finding's id names ([`framework_key`]).
    pub fn framework_by_key(&self, key: &str) -> Option<(&'a PythonEnv, &'a FrameworkBuild)> {
        self.frameworks()
            .into_iter()
            .find(|(e, f)| framework_key(e, f) == key)
    }

    /// Whether any env lists one of `packages` (old fingerprints list them
    /// in `cuda_packages` without the `frameworks` reading).
    pub fn has_package(&self, packages: &[&str]) -> bool {
        self.fp.python.iter().any(|e| {
            e.cuda_packages
                .iter()
                .any(|p| packages.contains(&p.name.as_str()))
        })
    }

    /// The active Python env prefix (`$VIRTUAL_ENV`, `$CONDA_PREFIX`).
    pub fn active_prefix(&self) -> Option<&str> {
        self.env("VIRTUAL_ENV")
            .or_else(|| self.env("CONDA_PREFIX"))
            .filter(|p| !p.is_empty())
    }

    /// Whether `env` is the one the user runs (or no env is active).
    pub fn is_active(&self, env: &PythonEnv) -> bool {
        match self.active_prefix() {
            None => true,
            Some(p) => env.site_packages.starts_with(p.trim_end_matches('/')),
        }
    }

    /// Whether something on this machine expects an NVIDIA GPU: a CUDA
    /// framework build, `NVIDIA_VISIBLE_DEVICES`, or an NVIDIA PCI device.
    pub fn expects_gpu(&self) -> Option<String> {
        if let Some((e, t)) = self.torches().into_iter().find(|(_, t)| t.cuda.is_some()) {
            return Some(format!(
                "torch {} (CUDA {}) is installed in {}",
                t.version,
                t.cuda.map(|c| c.to_string()).unwrap_or_default(),
                e.site_packages
            ));
        }
        if let Some(v) = self.env("NVIDIA_VISIBLE_DEVICES") {
            if !matches!(v, "void" | "none" | "") {
                return Some(format!("NVIDIA_VISIBLE_DEVICES={v} asks for GPUs"));
            }
        }
        if let Some(p) = self.pci_gpus().and_then(|g| g.first().copied()) {
            return Some(format!("an NVIDIA GPU is on the PCI bus at {}", p.address));
        }
        None
    }

    /// One line describing the machine.
    pub fn headline(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.fp.driver.version.value() {
            parts.push(format!("driver {v}"));
        }
        if let Some((c, _)) = self.driver_cuda() {
            parts.push(format!("CUDA {c} driver API"));
        }
        let gpus = self.gpus();
        if !gpus.is_empty() {
            let mut names: Vec<String> = Vec::new();
            for g in &gpus {
                let n = match g.cc {
                    Some(cc) => format!("{} (CC {cc})", g.name),
                    None => g.name.clone(),
                };
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            parts.push(format!(
                "{} GPU{}: {}",
                gpus.len(),
                if gpus.len() == 1 { "" } else { "s" },
                names.join(", ")
            ));
        }
        for (_, t) in self.torches() {
            parts.push(format!("torch {}", t.version));
        }
        if parts.is_empty() {
            "nothing of the NVIDIA stack observed".into()
        } else {
            parts.join("; ")
        }
    }
}

/// What a finding about one framework build appends to its check's name:
/// the env and the distribution (`/opt/venv/…/site-packages:jax-cuda13-plugin`).
pub(crate) fn framework_key(env: &PythonEnv, fw: &FrameworkBuild) -> String {
    format!("{}:{}", env.site_packages, fw.distribution)
}

/// One line per framework build for the framework layer.
fn framework_line(env: &PythonEnv, fw: &FrameworkBuild) -> Evidence {
    let cuda = match &fw.cuda {
        Observed::Found { value, .. } => format!(
            "CUDA {value}{}, from {}",
            value
                .cudnn_major
                .map(|c| format!(", cuDNN {c}"))
                .unwrap_or_default(),
            value.read_from
        ),
        o => format!("CUDA build not read: {}", o.why_not().unwrap_or("")),
    };
    Evidence::new(
        format!(
            "{} {} ({cuda}) in {}",
            fw.distribution, fw.version, env.site_packages
        ),
        fw.cuda.source(),
    )
}

/// Each layer's status: the worst finding on it, else ok when its facts were
/// observed, could_not_check when they were not, not_applicable when the
/// layer does not exist on this machine.
pub(crate) fn layers(v: &View, findings: &[Finding]) -> Vec<LayerReport> {
    Layer::ALL
        .iter()
        .map(|&layer| {
            let on: Vec<&Finding> = findings
                .iter()
                .filter(|f| f.layer == layer && f.severity != Severity::Info)
                .collect();
            let worst = on.iter().map(|f| f.severity).min();
            let (status, mut evidence) = match worst {
                Some(Severity::Failure) => (Status::Failure, Vec::new()),
                Some(Severity::Warning) => (Status::Warning, Vec::new()),
                _ => healthy_status(v, layer),
            };
            // Root causes first, then what they explain (said so).
            let mut on = on;
            on.sort_by_key(|f| !f.root_cause);
            for f in &on {
                evidence.push(Evidence {
                    fact: match &f.explained_by {
                        Some(cause) => format!("{} (a consequence of {cause})", f.title),
                        None => f.title.clone(),
                    },
                    source: f.evidence.first().map(|e| e.source.clone()).unwrap_or(
                        Source::Derived {
                            from: f.check.to_string(),
                        },
                    ),
                });
            }
            LayerReport {
                layer,
                status,
                evidence,
            }
        })
        .collect()
}

/// A layer's status and facts when no finding is on it: ok with the facts
/// that show it works, could_not_check when they were not observed,
/// not_applicable when the layer does not exist here.
fn healthy_status(v: &View, layer: Layer) -> (Status, Vec<Evidence>) {
    let gpus = v.gpus();
    let no_gpu = gpus.is_empty() && v.pci_gpus().is_some_and(|g| g.is_empty()) && !v.is_jetson();
    match layer {
        Layer::Hardware => hardware_status(v, &gpus, no_gpu),
        Layer::KernelDriver => kernel_driver_status(v, no_gpu),
        Layer::ContainerWsl => container_wsl_status(v),
        Layer::CudaDriver => cuda_driver_status(v, no_gpu),
        Layer::CudaLibraries => cuda_libraries_status(v),
        Layer::Framework => framework_status(v),
        Layer::KernelImage => kernel_image_status(v, &gpus),
        Layer::Jetson => jetson_status(v),
    }
}

/// The hardware layer: the GPUs visible, else those on the PCI bus.
fn hardware_status(v: &View, gpus: &[Gpu], no_gpu: bool) -> (Status, Vec<Evidence>) {
    let fp = v.fp;
    if let Some(g) = gpus.first() {
        (
            Status::Ok,
            vec![Evidence::new(
                format!("{} GPU(s) visible, first {}", gpus.len(), g.name),
                &g.source,
            )],
        )
    } else if no_gpu {
        (
            Status::NotApplicable,
            vec![Evidence::new(
                "no NVIDIA GPU on the PCI bus",
                fp.pci.source(),
            )],
        )
    } else if let Some(p) = v.pci_gpus().filter(|g| !g.is_empty()) {
        (
            Status::Ok,
            vec![Evidence::new(
                format!("{} NVIDIA GPU(s) on the PCI bus", p.len()),
                fp.pci.source(),
            )],
        )
    } else {
        (Status::CouldNotCheck, vec![why_not("GPU list", &fp.nvml)])
    }
}

/// The kernel driver layer: the loaded driver's version (L4T's nvgpu on a Jetson).
fn kernel_driver_status(v: &View, no_gpu: bool) -> (Status, Vec<Evidence>) {
    let fp = v.fp;
    if v.is_jetson() {
        return (
            Status::Ok,
            vec![Evidence::new(
                "the Jetson iGPU is driven by nvgpu from L4T",
                fp.jetson.source(),
            )],
        );
    }
    match &fp.driver.version {
        Observed::Found { value, source } => (
            Status::Ok,
            vec![Evidence::new(
                format!("NVIDIA kernel driver {value} loaded"),
                source,
            )],
        ),
        _ if no_gpu => (Status::NotApplicable, vec![]),
        o => (Status::CouldNotCheck, vec![why_not("kernel driver", o)]),
    }
}

/// The container / WSL layer: the driver library the container or WSL2 sees.
fn container_wsl_status(v: &View) -> (Status, Vec<Evidence>) {
    match (v.container(), v.is_wsl()) {
        (None, false) => (Status::NotApplicable, vec![]),
        (c, _) => {
            let what = c.map_or("WSL2".to_string(), |c| format!("container ({c})"));
            match &v.fp.driver.libcuda {
                Observed::Found { value, source } => (
                    Status::Ok,
                    vec![Evidence::new(
                        format!("{what} sees the driver library {}", value.real_path),
                        source,
                    )],
                ),
                o => (Status::CouldNotCheck, vec![why_not("libcuda", o)]),
            }
        }
    }
}

/// The CUDA driver API layer: what cuInit returned and the devices it found.
fn cuda_driver_status(v: &View, no_gpu: bool) -> (Status, Vec<Evidence>) {
    let fp = v.fp;
    match &fp.cuda {
        Observed::Found { value, source } => match &value.init {
            Observed::Found {
                value: r,
                source: s,
            } if r == "CUDA_SUCCESS" => (
                Status::Ok,
                vec![Evidence::new(
                    format!(
                        "cuInit returned CUDA_SUCCESS; {} device(s)",
                        value.devices.len()
                    ),
                    s,
                )],
            ),
            Observed::Found {
                value: r,
                source: s,
            } => (
                Status::Ok,
                vec![Evidence::new(format!("cuInit returned {r}"), s)],
            ),
            o => (
                Status::CouldNotCheck,
                vec![Evidence::new(
                    format!(
                        "cuInit not observed: {} (CUDA {} driver API loaded)",
                        o.why_not().unwrap_or(""),
                        value.driver_version
                    ),
                    source,
                )],
            ),
        },
        _ if no_gpu => (Status::NotApplicable, vec![]),
        _ if v.is_jetson() => (
            Status::CouldNotCheck,
            vec![why_not("CUDA driver API", &fp.cuda)],
        ),
        o => (Status::CouldNotCheck, vec![why_not("CUDA driver API", o)]),
    }
}

/// The CUDA libraries layer: torch's libraries resolve, else library files found.
fn cuda_libraries_status(v: &View) -> (Status, Vec<Evidence>) {
    let fp = v.fp;
    let torches = v.torches();
    if torches.iter().any(|(_, t)| !t.loads.is_empty()) {
        let n: usize = torches.iter().map(|(_, t)| t.loads.len()).sum();
        (
            Status::Ok,
            vec![Evidence::new(
                format!("all {n} CUDA libraries torch needs resolve"),
                &torches[0].1.source,
            )],
        )
    } else if !fp.libraries.files.is_empty() {
        (
            Status::Ok,
            vec![Evidence::new(
                format!("{} CUDA library files found", fp.libraries.files.len()),
                &Source::Derived {
                    from: "library search".into(),
                },
            )],
        )
    } else {
        (Status::NotApplicable, vec![])
    }
}

/// The framework layer: the first torch, then one line per framework build.
fn framework_status(v: &View) -> (Status, Vec<Evidence>) {
    let mut evidence: Vec<Evidence> = v
        .torches()
        .first()
        .map(|(e, t)| {
            Evidence::new(
                format!(
                    "torch {} ({}) in {}",
                    t.version,
                    t.cuda
                        .map_or("CPU build".to_string(), |c| format!("CUDA {c}")),
                    e.site_packages
                ),
                &t.source,
            )
        })
        .into_iter()
        .collect();
    evidence.extend(
        v.frameworks()
            .into_iter()
            .map(|(e, f)| framework_line(e, f)),
    );
    if evidence.is_empty() {
        (Status::NotApplicable, vec![])
    } else {
        (Status::Ok, evidence)
    }
}

/// The kernel image layer: the GPU code a CUDA torch carries.
fn kernel_image_status(v: &View, gpus: &[Gpu]) -> (Status, Vec<Evidence>) {
    let torches = v.torches();
    let Some((_, t)) = torches.iter().find(|(_, t)| t.cuda.is_some()) else {
        return (Status::NotApplicable, vec![]);
    };
    match (&t.kernels, gpus.is_empty()) {
        (Observed::Found { value, source }, false) => (
            Status::Ok,
            vec![Evidence::new(
                format!(
                    "libtorch_cuda.so carries code every GPU here runs ({} SASS, {} PTX targets)",
                    value.sass.len(),
                    value.ptx.len()
                ),
                source,
            )],
        ),
        (Observed::Found { source, .. }, true) => (
            Status::CouldNotCheck,
            vec![Evidence::new("no GPU compute capability observed", source)],
        ),
        (o, _) => (Status::CouldNotCheck, vec![why_not("torch GPU code", o)]),
    }
}

/// The Jetson layer: the L4T and JetPack releases read.
fn jetson_status(v: &View) -> (Status, Vec<Evidence>) {
    match &v.fp.jetson {
        Observed::Found { source, value } => (
            Status::Ok,
            vec![Evidence::new(
                format!(
                    "L4T {} / JetPack {} agree",
                    value
                        .l4t
                        .as_ref()
                        .map(|l| l.version.to_string())
                        .unwrap_or("?".into()),
                    value
                        .jetpack
                        .as_ref()
                        .map(|j| j.version.clone())
                        .unwrap_or("?".into())
                ),
                source,
            )],
        ),
        _ => (Status::NotApplicable, vec![]),
    }
}

/// Evidence that `what` was not observed, and why.
fn why_not<T>(what: &str, o: &Observed<T>) -> Evidence {
    Evidence::new(
        format!("{what}: {}", o.why_not().unwrap_or("not observed")),
        o.source(),
    )
}
