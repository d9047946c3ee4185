//! The diagnosis: the one place gpukb judges a machine. [`diagnose`] walks the
//! chain GPU → kernel driver → container/WSL → CUDA driver API → CUDA
//! libraries → framework → kernel image (→ Jetson) over a
//! [`gpukb_facts::Fingerprint`], runs every typed check ([`checks::CHECKS`]), links
//! consequences to their root cause, gives each layer a status with the facts
//! that prove it, and computes the fixes that fit this machine ([`fixes`]).
//! The result is a serde [`Diagnosis`]; `cli` only renders it.
//!
//! The doctor depends on the facts (`gpukb-facts`, `gpukb-jetson`) and on no
//! knowledge base: `gpukb-kb` links its entries to the findings afterwards
//! (`Kb::link_entries`), never the reverse. [`unasked`] says which undecided
//! checks wait on what a cheap snapshot left unasked. [`effect`] is the one table of what
//! a printed command does to a machine, which the doctor's fixes and search's
//! placement of KB fixes both judge with.
#![forbid(unsafe_code)]
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod checks;
pub mod effect;
pub mod fixes;
pub mod unasked;
mod view;

pub use crate::effect::RunsOn;
pub use checks::CheckId;
use gpukb_facts::measured::ProbeEvidence;
use gpukb_facts::{Fingerprint, Source};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use unasked::Unasked;

pub use view::View;

/// Version of the `Diagnosis` JSON.
pub const DIAGNOSIS_SCHEMA_VERSION: u32 = 1;

/// A link of the chain, in the order it breaks (`Ord` is chain order).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Hardware,
    KernelDriver,
    ContainerWsl,
    CudaDriver,
    CudaLibraries,
    Framework,
    KernelImage,
    Jetson,
}

impl Layer {
    /// Every layer in chain order.
    pub const ALL: [Layer; 8] = [
        Layer::Hardware,
        Layer::KernelDriver,
        Layer::ContainerWsl,
        Layer::CudaDriver,
        Layer::CudaLibraries,
        Layer::Framework,
        Layer::KernelImage,
        Layer::Jetson,
    ];
    /// The JSON id (`kernel_driver`).
    pub fn id(self) -> &'static str {
        match self {
            Layer::Hardware => "hardware",
            Layer::KernelDriver => "kernel_driver",
            Layer::ContainerWsl => "container_wsl",
            Layer::CudaDriver => "cuda_driver",
            Layer::CudaLibraries => "cuda_libraries",
            Layer::Framework => "framework",
            Layer::KernelImage => "kernel_image",
            Layer::Jetson => "jetson",
        }
    }
    /// What users call it.
    pub fn title(self) -> &'static str {
        match self {
            Layer::Hardware => "GPU hardware",
            Layer::KernelDriver => "Kernel driver",
            Layer::ContainerWsl => "Container / WSL",
            Layer::CudaDriver => "CUDA driver API",
            Layer::CudaLibraries => "CUDA libraries",
            Layer::Framework => "Framework build",
            Layer::KernelImage => "Kernel image for the GPU",
            Layer::Jetson => "Jetson (L4T / JetPack)",
        }
    }
}

/// How bad a finding is. `Ord`: failure first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Failure,
    Warning,
    Info,
}

/// A layer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Warning,
    Failure,
    CouldNotCheck,
    NotApplicable,
}

/// The machine's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Warning,
    Failure,
    Unknown,
}

/// A fact that proves something, with where it was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// One sentence.
    pub fact: String,
    /// The fingerprint's source object.
    #[schemars(with = "serde_json::Value")]
    pub source: Source,
}

impl Evidence {
    pub fn new(fact: impl Into<String>, source: &Source) -> Self {
        Evidence {
            fact: fact.into(),
            source: source.clone(),
        }
    }
}

/// What kind of thing a finding concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AffectsKind {
    /// One GPU.
    Gpu,
    /// One Python environment.
    PythonEnv,
    /// One library file.
    Library,
    /// The machine as a whole.
    Host,
}

/// What a finding concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Affects {
    /// `gpu`, `python_env`, `library` or `host`.
    #[schemars(with = "String")]
    pub kind: AffectsKind,
    /// GPU index and UUID, env path, library path, or `host`.
    pub id: String,
}

impl Affects {
    pub fn host() -> Self {
        Affects {
            kind: AffectsKind::Host,
            id: "host".into(),
        }
    }
    pub fn gpu(index: u32, uuid: &str) -> Self {
        Affects {
            kind: AffectsKind::Gpu,
            id: if uuid.is_empty() {
                format!("{index}")
            } else {
                format!("{index} ({uuid})")
            },
        }
    }
    pub fn env(path: &str) -> Self {
        Affects {
            kind: AffectsKind::PythonEnv,
            id: path.into(),
        }
    }
    pub fn library(path: &str) -> Self {
        Affects {
            kind: AffectsKind::Library,
            id: path.into(),
        }
    }
}

/// One step that fixes a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FixStep {
    /// What to do.
    pub text: String,
    /// Shell lines.
    pub commands: Vec<String>,
    /// Set for destructive steps: what it removes, and the safer alternative.
    pub warning: Option<String>,
    /// True when computed from this fingerprint (driver branch, torch build, index).
    pub for_this_machine: bool,
    /// Where the step runs: this machine, the container's host, Windows (under
    /// WSL2), the firmware's screens, or a host that flashes a Jetson.
    #[serde(default)]
    pub runs_on: RunsOn,
    /// Set when the step is one of several alternatives: run one option of a group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<Choice>,
}

/// One option among alternative fix steps (the text prints "one of:").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Choice {
    /// The group's id: the finding's id.
    pub group: String,
    /// 1 for the recommended option, then 2, 3…
    pub option: u32,
}

/// One finding (brew's record: text, severity, affects, links, remediation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Unique: the check, plus what it concerns (`torch_lacks_gpu_arch:gpu1`).
    pub id: String,
    /// Stable check name.
    #[schemars(with = "String")]
    pub check: CheckId,
    /// One sentence for users.
    pub title: String,
    pub severity: Severity,
    pub layer: Layer,
    /// True unless another finding explains this one.
    pub root_cause: bool,
    /// The id of the finding that explains this one.
    pub explained_by: Option<String>,
    /// A `kb/categories.tsv` label.
    pub category: String,
    /// Knowledge-base entries that describe it.
    pub kb_entries: Vec<String>,
    pub affects: Vec<Affects>,
    pub evidence: Vec<Evidence>,
    /// Commands that confirm it.
    pub confirm: Vec<String>,
    pub fixes: Vec<FixStep>,
}

/// One layer's status and the facts behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayerReport {
    pub layer: Layer,
    pub status: Status,
    pub evidence: Vec<Evidence>,
}

/// A check that could not be decided, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Undecided {
    #[schemars(with = "String")]
    pub check: CheckId,
    pub reason: String,
}

/// What one check concluded, for `search` to confirm or rule out entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", content = "because", rename_all = "snake_case")]
pub enum CheckOutcome {
    /// The check found its condition (the finding's title).
    Holds(String),
    /// The facts show it does not hold.
    Clear(String),
    /// The facts needed were not observed.
    Undecided(String),
}

/// The doctor's answer for one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    pub schema_version: u32,
    pub verdict: Verdict,
    /// One line.
    pub summary: String,
    /// Which machine input was used (`this machine`, `capture DIR`…).
    pub input: String,
    /// Every layer, in chain order.
    pub layers: Vec<LayerReport>,
    /// Root causes first (by severity, then chain order), then consequences.
    pub findings: Vec<Finding>,
    /// Checks not decided, and why (`--verbose`).
    pub undecided: Vec<Undecided>,
    /// Every check's outcome by name.
    pub checks: BTreeMap<String, CheckOutcome>,
}

impl Diagnosis {
    /// The outcome of check `id` (`Undecided` when it did not run).
    pub fn outcome(&self, id: CheckId) -> CheckOutcome {
        self.checks
            .get(id.name())
            .cloned()
            .unwrap_or_else(|| CheckOutcome::Undecided(format!("{id} did not run")))
    }
    /// The process exit code this verdict maps to (ok 0, warning 0 or 1 with
    /// `strict`, failure 1, unknown 3).
    pub fn exit_code(&self, strict: bool) -> u8 {
        match self.verdict {
            Verdict::Ok => 0,
            Verdict::Warning => u8::from(strict),
            Verdict::Failure => 1,
            Verdict::Unknown => 3,
        }
    }
}

/// The JSON schema of [`Diagnosis`].
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Diagnosis)).unwrap_or_default()
}

/// Judges `fp`. `input` names the machine input for the output. The findings'
/// `kb_entries` are left empty: the knowledge base fills them in
/// (`gpukb_kb::Kb::link_entries`), by the entries' `[[conditions]] when = "<check>"`.
pub fn diagnose(fp: &Fingerprint, input: &str) -> Diagnosis {
    diagnose_with_probe(fp, None, input)
}

/// Like [`diagnose`], with what `gpukb probe` measured on the GPUs.
pub fn diagnose_with_probe(
    fp: &Fingerprint,
    probe: Option<&ProbeEvidence>,
    input: &str,
) -> Diagnosis {
    diagnose_inner(fp, probe, input, true)
}

/// Like [`diagnose`] without working out each finding's fixes (`fixes` stays empty): for
/// callers that ask only which checks hold, clear or stay undecided (`gpukb search`).
/// Fixes read the planner's tables and the command-effect tables, most of a diagnosis' time.
pub fn diagnose_verdicts(fp: &Fingerprint, input: &str) -> Diagnosis {
    diagnose_inner(fp, None, input, false)
}

fn diagnose_inner(
    fp: &Fingerprint,
    probe: Option<&ProbeEvidence>,
    input: &str,
    with_fixes: bool,
) -> Diagnosis {
    let view = View::with_probe(fp, probe);
    let mut findings = Vec::new();
    let mut checks = BTreeMap::new();
    let mut undecided = Vec::new();
    for check in checks::CHECKS {
        let name = check.id.name().to_string();
        match (check.run)(&view) {
            checks::Conclusion::Found(mut f) => {
                let title = f.first().map(|x| x.title.clone()).unwrap_or_default();
                // An info-only finding (a harmless duplicate, an idle link) does not
                // confirm a diagnosis, except the context checks that say what this is.
                let holds = check.context || f.iter().any(|x| x.severity != Severity::Info);
                checks.insert(
                    name,
                    if holds {
                        CheckOutcome::Holds(title)
                    } else {
                        CheckOutcome::Clear(title)
                    },
                );
                for x in &mut f {
                    checks::finalize_id(check.id, x);
                    x.check = check.id;
                    x.layer = check.layer;
                    if x.category.is_empty() {
                        x.category = check.category.to_string();
                    }
                }
                findings.extend(f);
            }
            checks::Conclusion::Clear(why) => {
                checks.insert(name, CheckOutcome::Clear(why));
            }
            checks::Conclusion::Undecided(why) => {
                undecided.push(Undecided {
                    check: check.id,
                    reason: why.clone(),
                });
                checks.insert(name, CheckOutcome::Undecided(why));
            }
        }
    }
    link_causes(&mut findings);
    for f in findings.iter_mut().filter(|_| with_fixes) {
        fixes::compute(&view, f, checks::Check::of(f.check).map(|c| c.fix));
    }
    findings.sort_by(|a, b| {
        (!a.root_cause, a.severity, a.layer, &a.id).cmp(&(
            !b.root_cause,
            b.severity,
            b.layer,
            &b.id,
        ))
    });
    let layers = view::layers(&view, &findings);
    let verdict = verdict_of(&findings, &layers);
    let summary = summary_of(verdict, &findings, &view);
    Diagnosis {
        schema_version: DIAGNOSIS_SCHEMA_VERSION,
        verdict,
        summary,
        input: input.to_string(),
        layers,
        findings,
        undecided,
        checks,
    }
}

/// Marks a finding as a consequence when a finding it names as a possible
/// cause is present (the first in the check's list wins).
fn link_causes(findings: &mut [Finding]) {
    let present: Vec<(CheckId, String, Severity)> = findings
        .iter()
        .map(|f| (f.check, f.id.clone(), f.severity))
        .collect();
    for f in findings.iter_mut() {
        let Some(check) = checks::Check::of(f.check) else {
            continue;
        };
        if let Some((_, id, _)) = check.explained_by.iter().find_map(|cause| {
            present
                .iter()
                .find(|(c, id, s)| c == cause && *id != f.id && *s != Severity::Info)
        }) {
            f.root_cause = false;
            f.explained_by = Some(id.clone());
        }
    }
}

fn verdict_of(findings: &[Finding], layers: &[LayerReport]) -> Verdict {
    let roots = findings.iter().filter(|f| f.root_cause);
    let worst = roots.map(|f| f.severity).min();
    match worst {
        Some(Severity::Failure) => Verdict::Failure,
        Some(Severity::Warning) => Verdict::Warning,
        _ if !layers.iter().any(|l| l.status == Status::Ok) => Verdict::Unknown,
        _ => Verdict::Ok,
    }
}

fn summary_of(verdict: Verdict, findings: &[Finding], view: &View) -> String {
    let roots: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.root_cause && f.severity != Severity::Info)
        .collect();
    let consequences = findings
        .iter()
        .filter(|f| !f.root_cause && f.severity != Severity::Info)
        .count();
    match verdict {
        Verdict::Ok => format!("No broken link: {}", view.headline()),
        Verdict::Unknown => match findings
            .iter()
            .find(|f| f.check == CheckId::NoNvidiaGpuVisible)
        {
            Some(f) => f.title.clone(),
            None if view.gpus().is_empty() => format!(
                "No NVIDIA GPU visible to this input (NVML: {}; CUDA: {}; PCI bus: {})",
                view.fp.nvml.why_not().unwrap_or("no GPUs"),
                view.fp.cuda.why_not().unwrap_or("no devices"),
                view.fp.pci.why_not().unwrap_or("no NVIDIA device")
            ),
            None => "Nothing of the GPU chain could be observed with this input".into(),
        },
        _ => {
            let mut s = format!(
                "{} root cause{}: {}",
                roots.len(),
                if roots.len() == 1 { "" } else { "s" },
                roots
                    .iter()
                    .map(|f| f.title.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            if consequences > 0 {
                s.push_str(&format!(
                    " ({consequences} consequence{} explained)",
                    if consequences == 1 { "" } else { "s" }
                ));
            }
            s
        }
    }
}
