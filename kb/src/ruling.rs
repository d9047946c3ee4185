//! What search may conclude about a knowledge-base entry from a machine's facts. A doctor
//! check decides an entry only when every fact its verdict rests on was observed in the
//! process view at hand (search's default detection reads files only: a check that needs
//! NVML or cuInit stays undecided there). A [`RuledOut`] can only be made here, from a
//! check that cleared on observed facts, and carries that evidence and the environment it
//! was observed in. A fact the paste states itself that differs from the machine model
//! ([`crate::agreement::Difference`]) withholds every check resting on it.

use gpukb_facts::fingerprint::Fingerprint;
use gpukb_facts::{Observed, Source};
use serde::Serialize;

use crate::agreement::{Difference, PasteFact};
use gpukb_doctor::{CheckId, CheckOutcome, Diagnosis, Evidence, View};

/// What a process view could read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProcessView {
    /// NVML answered (found or absent), so its GPU list and driver were observed.
    pub nvml: bool,
    /// The CUDA driver API answered (cuInit and the devices).
    pub cuda_driver_api: bool,
}

impl ProcessView {
    /// The view a fingerprint was taken with.
    pub fn of(fp: &Fingerprint) -> ProcessView {
        let answered = |u: bool| !u;
        ProcessView {
            nvml: answered(matches!(fp.nvml, Observed::Unobservable { .. })),
            cuda_driver_api: answered(matches!(fp.cuda, Observed::Unobservable { .. })),
        }
    }

    /// One phrase: `files only (no NVML, no CUDA driver API)`, `files and NVML`…
    pub fn describe(&self) -> &'static str {
        match (self.nvml, self.cuda_driver_api) {
            (false, false) => "files only (no NVML, no CUDA driver API)",
            (true, false) => "files and NVML (no CUDA driver API)",
            (false, true) => "files and the CUDA driver API (no NVML)",
            (true, true) => "files, NVML and the CUDA driver API",
        }
    }
}

/// The environment facts were observed in: whose process, what it could read, and the
/// environment variables it had that bear on GPUs and libraries.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Environment {
    /// Whose process (`this machine`, `capture DIR`, `fingerprint FILE`…).
    pub process: String,
    /// What that observation read.
    pub view: ProcessView,
    /// The relevant environment variables it had, `NAME=value` (unset ones are absent).
    pub env: Vec<String>,
}

impl Environment {
    /// The environment of a fingerprint described as `process`.
    pub fn of(fp: &Fingerprint, process: &str) -> Environment {
        Environment {
            process: process.to_string(),
            view: ProcessView::of(fp),
            env: fp
                .env
                .iter()
                .map(|v| format!("{}={}", v.name, v.value))
                .collect(),
        }
    }
}

/// A fact a check's verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// NVML's GPU list (cheap detection does not load NVML).
    Nvml,
    /// cuInit and the CUDA driver API's devices.
    CudaApi,
    /// A GPU list from NVML, the CUDA driver API, a Jetson, or the PCI bus and GPU table.
    Gpus,
    /// The PCI bus.
    Pci,
    /// `/proc/modules`.
    Modules,
    /// The kernel module's driver release.
    Driver,
    /// An environment variable of the observed process (set or not).
    Env(&'static str),
    /// An environment variable; when it is set, NVML's GPU list (to match indices and UUIDs).
    NvmlIfSet(&'static str),
    /// The loader model: which CUDA libraries torch loads, from where, which version.
    Loads,
    /// The Python environments and the packages in them.
    Python,
    /// Other files (release files, device nodes, library files).
    Files,
    /// What `gpukb probe` measured (search never has it).
    Probe,
}

/// What each doctor check's verdict rests on. `None` for a name no check has: such a
/// verdict never rules anything out.
pub fn rests_on(check: CheckId) -> &'static [Basis] {
    use Basis::*;
    const LIBS: &[Basis] = &[Loads, Env("LD_LIBRARY_PATH"), Env("LD_PRELOAD")];
    match check {
        CheckId::NoNvidiaGpuVisible => &[Gpus],
        CheckId::GpuMemoryFault | CheckId::ThermalOrPowerThrottling | CheckId::PcieLinkDegraded => {
            &[Nvml]
        }
        CheckId::MigWithoutInstances | CheckId::MigEnabled => &[Nvml],
        CheckId::NouveauBound | CheckId::NvidiaUvmNotLoaded => &[Modules],
        CheckId::SecureBootBlocksModule
        | CheckId::DriverNotBuiltForRunningKernel
        | CheckId::DriverNotInstalled
        | CheckId::DriverNotLoaded => &[Modules, Pci],
        CheckId::OpenModuleRequired => &[Gpus, Modules],
        CheckId::DriverBranchDropsGpu => &[Gpus, Driver],
        CheckId::DriverUserspaceMismatch | CheckId::ContainerShipsDriverLibraries => {
            &[Driver, Files]
        }
        CheckId::FabricManagerNotRunning => &[Pci, CudaApi],
        CheckId::SecureBootEnabled
        | CheckId::InContainer
        | CheckId::Wsl
        | CheckId::WslLibcudaMissing => &[Files],
        CheckId::OnJetson | CheckId::JetsonPartialUpgrade => &[Files],
        CheckId::ContainerWithoutGpu => &[Files, Env("NVIDIA_VISIBLE_DEVICES")],
        CheckId::CudaVisibleDevicesHidesGpus => &[NvmlIfSet("CUDA_VISIBLE_DEVICES")],
        CheckId::CudaInitFailed => &[CudaApi],
        CheckId::DriverOlderThanTorchCuda | CheckId::DriverOlderThanFrameworkCuda => {
            &[Driver, Python]
        }
        CheckId::TorchLibraryMissing
        | CheckId::LibraryShadowedByLdLibraryPath
        | CheckId::OnnxruntimeCudaLibraryMissing
        | CheckId::DuplicateLibraryVersions
        | CheckId::TorchPinMismatch => LIBS,
        CheckId::CudaHomeOlderThanTorch => &[Env("CUDA_HOME"), Python, Files],
        CheckId::TorchCpuOnly | CheckId::TorchLacksGpuArch | CheckId::ExtensionLacksGpuArch => {
            &[Gpus, Python]
        }
        CheckId::JetsonTorchWheelMismatch | CheckId::JetsonGenericAarch64Wheel => &[Files, Python],
        CheckId::JaxPluginVersionMismatch => &[Python],
        CheckId::ProbeKernelsFail | CheckId::ProbeLoadsDisagree | CheckId::ProbeThroughputLow => {
            &[Probe]
        }
        CheckId::GpuFellOffBus => &[Nvml, Pci],
        CheckId::WslLinuxDriverInstalled => &[Files],
        CheckId::CudaStubLibraryLoaded => LIBS,
    }
}

/// The evidence for one basis in `fp`, or why it was not observed.
fn observe(fp: &Fingerprint, b: Basis) -> Result<Evidence, String> {
    let nvml = || match &fp.nvml {
        Observed::Found { value, source } => Ok(Evidence::new(
            format!("NVML listed {} GPU(s)", value.gpus.len()),
            source,
        )),
        o => Err(format!(
            "NVML was not observed ({})",
            o.why_not().unwrap_or("no answer")
        )),
    };
    match b {
        Basis::Nvml => nvml(),
        Basis::CudaApi => match &fp.cuda {
            Observed::Found { value, source } => Ok(Evidence::new(
                format!(
                    "cuInit {}; {} device(s)",
                    value.init.value().map_or("not called", String::as_str),
                    value.devices.len()
                ),
                source,
            )),
            o => Err(format!(
                "the CUDA driver API was not called ({})",
                o.why_not().unwrap_or("no answer")
            )),
        },
        Basis::Gpus => {
            let gpus = View::new(fp).gpus();
            match (gpus.first(), fp.pci.value()) {
                (Some(g), _) => Ok(Evidence::new(
                    format!("{} GPU(s), {} first", gpus.len(), g.name),
                    &g.source,
                )),
                (None, Some(_)) => Ok(Evidence::new(
                    "no GPU listed; the PCI bus was read",
                    fp.pci.source(),
                )),
                (None, None) => Err("no GPU list and no PCI bus were observed".into()),
            }
        }
        Basis::Pci => found(&fp.pci, "the PCI bus"),
        Basis::Modules => found(&fp.driver.modules, "the loaded kernel modules"),
        Basis::Driver => match (&fp.driver.version, fp.nvml.value()) {
            (Observed::Found { value, source }, _) => {
                Ok(Evidence::new(format!("driver {value}"), source))
            }
            (_, Some(n)) => Ok(Evidence::new(
                format!("driver {}", n.driver_version),
                fp.nvml.source(),
            )),
            (o, None) => Err(format!(
                "the driver release was not observed ({})",
                o.why_not().unwrap_or("")
            )),
        },
        Basis::Env(var) => Ok(env_fact(fp, var)),
        Basis::NvmlIfSet(var) => match fp.env.iter().any(|v| v.name == var) {
            false => Ok(env_fact(fp, var)),
            true => nvml().map_err(|e| {
                format!("{var} is set; whether it names this machine's GPUs needs NVML: {e}")
            }),
        },
        Basis::Loads => Ok(loads_fact(fp)),
        Basis::Python => Ok(python_fact(fp)),
        Basis::Files => Ok(Evidence::new(
            "files read",
            &Source::Derived {
                from: "the machine's files".into(),
            },
        )),
        Basis::Probe => Err("gpukb probe did not run".into()),
    }
}

/// The Python environments read, naming the torch builds in them (from where each was read).
fn python_fact(fp: &Fingerprint) -> Evidence {
    let torches: Vec<&gpukb_facts::fingerprint::TorchInstall> =
        fp.python.iter().filter_map(|p| p.torch.as_ref()).collect();
    let n = fp.python.len();
    match torches.first() {
        None => Evidence::new(
            format!("{n} Python environment(s) read, no torch in them"),
            &Source::Derived {
                from: "site-packages".into(),
            },
        ),
        Some(t) => {
            let builds: Vec<String> = torches
                .iter()
                .map(|t| format!("torch {}", t.version))
                .collect();
            Evidence::new(
                format!("{n} Python environment(s) read: {}", builds.join(", ")),
                &t.source,
            )
        }
    }
}

fn found<T>(o: &Observed<T>, what: &str) -> Result<Evidence, String> {
    match o {
        Observed::Found { source, .. } => Ok(Evidence::new(format!("{what} was read"), source)),
        o => Err(format!(
            "{what} was not observed ({})",
            o.why_not().unwrap_or("")
        )),
    }
}

fn env_fact(fp: &Fingerprint, var: &str) -> Evidence {
    let fact = match fp.env.iter().find(|v| v.name == var) {
        Some(v) => format!("{var}={}", v.value),
        None => format!("{var} is not set"),
    };
    Evidence::new(fact, &Source::Env { var: var.into() })
}

/// The loader model's answer, shortened: the CUDA libraries torch loads, with versions.
fn loads_fact(fp: &Fingerprint) -> Evidence {
    let mut parts = Vec::new();
    let mut source = Source::Derived {
        from: "site-packages".into(),
    };
    for t in fp.python.iter().filter_map(|p| p.torch.as_ref()) {
        source = t.source.clone();
        for l in t.loads.iter().filter(|l| l.version.is_some()).take(6) {
            parts.push(format!(
                "{} {}",
                l.soname,
                l.version.as_deref().unwrap_or_default()
            ));
        }
    }
    let fact = if parts.is_empty() {
        "the loader model: no torch library with a known version".to_string()
    } else {
        format!("the loader model: torch loads {}", parts.join(", "))
    };
    Evidence::new(fact, &source)
}

/// Whether a difference between the paste and the machine touches `b`.
fn touches(d: &Difference, b: Basis) -> bool {
    match (&d.fact, b) {
        (
            PasteFact::LoadedLibrary(_) | PasteFact::LibraryPath(_) | PasteFact::MissingLibrary(_),
            Basis::Loads,
        ) => true,
        (PasteFact::Env(v), Basis::Env(w) | Basis::NvmlIfSet(w)) => v == w,
        (PasteFact::Env(v), Basis::Loads) => v == "LD_LIBRARY_PATH" || v == "LD_PRELOAD",
        (PasteFact::Driver, Basis::Driver | Basis::Nvml | Basis::CudaApi) => true,
        (PasteFact::Gpu, Basis::Gpus | Basis::Nvml | Basis::Pci) => true,
        (PasteFact::Torch, Basis::Python | Basis::Loads) => true,
        _ => false,
    }
}

/// A check's verdict that confirms an entry: the finding and what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Confirmed {
    /// The doctor check.
    pub check: String,
    /// The finding's title.
    pub because: String,
    /// The facts its verdict rests on, as observed.
    pub evidence: Vec<Evidence>,
}

/// A check's verdict that rules an entry out. Made only by [`MachineFacts::say`], from a
/// check that cleared with every fact it rests on observed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RuledOut {
    check: String,
    because: String,
    evidence: Vec<Evidence>,
    environment: Environment,
}

impl RuledOut {
    /// The doctor check that cleared.
    pub fn check(&self) -> &str {
        &self.check
    }
    /// Its sentence.
    pub fn because(&self) -> &str {
        &self.because
    }
    /// The observed facts it rests on (never empty).
    pub fn evidence(&self) -> &[Evidence] {
        &self.evidence
    }
    /// Where they were observed.
    pub fn environment(&self) -> &Environment {
        &self.environment
    }
}

/// What one check says about entries that name it.
#[derive(Debug, Clone, PartialEq)]
pub enum Say {
    /// It found its condition.
    Holds(Confirmed),
    /// It cleared on observed facts.
    Clear(RuledOut),
    /// It cannot decide here, and why.
    Undecided(String),
}

/// A machine's facts as search uses them: the doctor's Diagnosis, the environment, the
/// evidence each check rests on, and the model facts the paste's own facts are compared
/// with.
pub struct MachineFacts {
    /// The doctor's answer for the machine.
    pub diagnosis: Diagnosis,
    /// Where the facts were observed.
    pub environment: Environment,
    basis: std::collections::HashMap<CheckId, Result<Vec<Evidence>, String>>,
    fp: Fingerprint,
    reported: bool,
}

/// The checks a pasted environment report decides: those resting only on the GPU list, the
/// driver release and the torch build, which `collect_env` and `nvidia-smi` show. A report
/// shows no libraries, modules, environment variables, extensions or other frameworks, so
/// every other check stays undecided on its facts.
///
/// Not whether a GPU is visible: a report pasted from the host lists GPUs that the failing
/// container or VM may not have.
pub const REPORT_DECIDES: &[CheckId] = &[
    CheckId::DriverBranchDropsGpu,
    CheckId::DriverOlderThanTorchCuda,
    CheckId::TorchCpuOnly,
    CheckId::TorchLacksGpuArch,
];

impl MachineFacts {
    /// Diagnoses `fp`, observed in the process described as `process`.
    pub fn observe(fp: &Fingerprint, process: &str) -> MachineFacts {
        let diagnosis = gpukb_doctor::diagnose_verdicts(fp, process);
        MachineFacts::with_diagnosis(fp, diagnosis, process)
    }

    /// The platform of the observed machine (bare metal or VM, container, WSL2, Jetson).
    pub fn platform(&self) -> gpukb_doctor::fixes::Platform {
        gpukb_doctor::fixes::Platform::of(&gpukb_doctor::View::new(&self.fp))
    }

    /// The doctor's findings with the KB entries linked to each, as `gpukb doctor`
    /// prints them (`read:`); `diagnosis` leaves them unlinked.
    pub fn linked_findings(&self, kb: &crate::Kb) -> Vec<gpukb_doctor::Finding> {
        let mut d = self.diagnosis.clone();
        kb.link_entries(&self.fp, &mut d);
        d.findings
    }

    /// Like [`MachineFacts::observe`] with a Diagnosis already made of `fp`.
    pub fn with_diagnosis(fp: &Fingerprint, diagnosis: Diagnosis, process: &str) -> Self {
        let mut basis = std::collections::HashMap::new();
        for c in gpukb_doctor::checks::CHECKS {
            let ev = rests_on(c.id).iter().map(|b| observe(fp, *b)).collect();
            basis.insert(c.id, ev);
        }
        MachineFacts {
            diagnosis,
            environment: Environment::of(fp, process),
            basis,
            fp: fp.clone(),
            reported: false,
        }
    }

    /// The facts of the machine a pasted report (`collect_env`, `nvidia-smi`) describes:
    /// only [`REPORT_DECIDES`] is decided, and of it only the checks whose every basis the
    /// report shows; every other check is undecided and its findings are dropped.
    pub fn from_report(report: &gpukb_facts::reported::Reported) -> MachineFacts {
        let fp = report.fingerprint();
        let what = report.describe();
        let mut diagnosis = gpukb_doctor::diagnose_verdicts(&fp, &what);
        // What this report shows: a check decides only when it shows every fact the
        // check rests on (an nvidia-smi table shows no torch build).
        let shown = |b: &Basis| match b {
            Basis::Gpus => !report.gpus.is_empty() && fp.nvml.is_found(),
            Basis::Driver => report.driver.is_some(),
            Basis::Python => report.torch.is_some(),
            _ => false,
        };
        let decides = |name: &str| {
            REPORT_DECIDES
                .iter()
                .any(|c| c.name() == name && rests_on(*c).iter().all(shown))
        };
        diagnosis.findings.retain(|f| decides(f.check.name()));
        for (name, outcome) in diagnosis.checks.iter_mut() {
            if !decides(name) {
                *outcome = CheckOutcome::Undecided(format!(
                    "{what} does not show the facts {name} rests on"
                ));
            }
        }
        let mut facts = MachineFacts::with_diagnosis(&fp, diagnosis, &what);
        facts.reported = true;
        facts
    }

    /// Whether these facts are a pasted report's rather than an observed machine's.
    pub fn reported(&self) -> bool {
        self.reported
    }

    /// The fingerprint the facts come from.
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fp
    }

    /// What check `name` says here, given what the paste says differently (`differs`).
    pub fn say(&self, name: &str, differs: &[Difference]) -> Say {
        let Some(id) = CheckId::from_name(name) else {
            return Say::Undecided(format!("no check named {name}"));
        };
        let outcome = self.diagnosis.outcome(id);
        if let CheckOutcome::Undecided(why) = outcome {
            return Say::Undecided(why);
        }
        let bases = rests_on(id);
        if let Some(d) = differs
            .iter()
            .find(|d| bases.iter().any(|b| touches(d, *b)))
        {
            return Say::Undecided(format!(
                "the failing process differs from what gpukb observed ({})",
                d.sentence()
            ));
        }
        match outcome {
            // A finding carries the evidence it was found on.
            CheckOutcome::Holds(because) => Say::Holds(Confirmed {
                check: name.to_string(),
                because,
                evidence: self
                    .diagnosis
                    .findings
                    .iter()
                    .filter(|f| f.check == id)
                    .flat_map(|f| f.evidence.iter().cloned())
                    .collect(),
            }),
            // A clear verdict rules out only on every fact it rests on, observed here.
            CheckOutcome::Clear(because) => match self.basis.get(&id) {
                Some(Ok(ev)) if !ev.is_empty() => Say::Clear(RuledOut {
                    check: name.to_string(),
                    because,
                    evidence: ev.clone(),
                    environment: self.environment.clone(),
                }),
                Some(Err(why)) => Say::Undecided(why.clone()),
                _ => Say::Undecided(format!("no observed fact decides {name}")),
            },
            CheckOutcome::Undecided(why) => Say::Undecided(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_decides_only_checks_resting_on_gpus_driver_and_torch() {
        for c in REPORT_DECIDES {
            for b in rests_on(*c) {
                assert!(
                    matches!(b, Basis::Gpus | Basis::Driver | Basis::Python),
                    "{c} rests on {b:?}"
                );
            }
        }
    }

    #[test]
    fn every_check_says_what_it_rests_on() {
        for c in gpukb_doctor::checks::CHECKS {
            assert!(!rests_on(c.id).is_empty(), "{}", c.id);
        }
    }
}
