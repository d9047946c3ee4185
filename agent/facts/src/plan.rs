//! The install planner behind `gpukb plan`: which PyTorch builds run on one
//! or more machines (observed or described), why every other one fails, the
//! one to install and its exact command, the driver branch and CUDA toolkit
//! that go with it, NGC containers as an alternative, and a build's GPU
//! support table. Pure: machine facts in, a [`Plan`] out; every rule comes
//! from [`crate::compat`] and every row from [`crate::builds`].
//!
//! Policy (issue 10 §4): the newest release whose build runs natively (SASS)
//! on every GPU; among its variants the newest CUDA the driver runs without
//! forward compatibility, ties to the PyPI default; else the newest that
//! runs through PTX JIT, marked so; none when no CUDA build runs.

use crate::builds::{self, Arch, JetsonWheel, KnownFrom, PyVersion, Release, Targets, TorchWheel};
use crate::compat::{self, BranchCuda, DriverCompat, ImageOutcome};
use crate::gpus::GpuClass;
use crate::schema_doc::UNPUBLISHED;
use crate::version::{ComputeCapability, CudaVersion, DriverVersion};
use gpukb_jetson::L4tVersion;
use serde::Serialize;

/// Version of the JSON `gpukb plan --json` writes.
pub const SCHEMA_VERSION: u32 = 1;

const SRC_MVC: &str = "CUDA 13.2 Update 2 release notes, Table 2 (minor-version compatibility); CUDA Compatibility guide";
const SRC_BIN: &str =
    "CUDA Programming Guide, Binary Compatibility; Ada/Ampere compatibility guides";
const SRC_FWD: &str = "CUDA Compatibility guide, Forward Compatibility (datacenter GPUs, select NGC Server Ready RTX SKUs, Jetson)";
const SRC_BRANCH: &str =
    "CUDA 13.2 Update 2 release notes, Table 3 (toolkit driver per CUDA release)";
const SRC_JETSON: &str = "jetson/data/jetpack.csv (jetson_stats, OE4T/meta-tegra); NVIDIA 'Installing PyTorch for Jetson Platform'";

/// One GPU of a machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuFact {
    /// The GPU's name, as NVML or the tables give it (`NVIDIA H200`).
    pub name: String,
    /// The compute capability.
    pub cc: ComputeCapability,
    /// The product class, which decides forward compatibility.
    pub class: GpuClass,
    /// False when the GPU is newer than the tables (only PTX can cover it).
    pub in_table: bool,
    /// Where it was learnt (`NVML`, the PCI ID table, the user's `--gpu`).
    pub source: String,
}

impl GpuFact {
    fn newer_than_data(&self) -> bool {
        !self.in_table && self.cc > crate::gpus::newest_known_cc()
    }
    fn is_tegra(&self) -> bool {
        self.class == GpuClass::Jetson || compat::is_tegra(self.cc.pair())
    }
}

/// What is known of the driver.
#[derive(Debug, Clone, PartialEq)]
pub enum DriverFact {
    /// Installed, with this version.
    Known {
        /// The driver's version (`580.95.05`); a bare branch given by the
        /// user is read as the branch's first release.
        version: DriverVersion,
        /// "driver 535 read as 535.54.03, the first R535 release…".
        note: Option<String>,
    },
    /// Seen not to be installed.
    Absent(String),
    /// Could not be observed.
    Unknown(String),
}

/// The Jetson side of a machine.
#[derive(Debug, Clone, PartialEq)]
pub struct JetsonFact {
    /// The JetPack release (`6.2`), when known.
    pub jetpack: Option<String>,
    /// The L4T (Jetson Linux) release (`36.4.3`), when known.
    pub l4t: Option<L4tVersion>,
}

/// One machine to plan for.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerFacts {
    /// "this machine", "capture tests/fixtures/…", "described".
    pub label: String,
    /// The machine's NVIDIA GPUs (empty: none, or unknown; see `gpus_unknown`).
    pub gpus: Vec<GpuFact>,
    /// Why the GPUs could not be observed (`None`: `gpus` is what is there).
    pub gpus_unknown: Option<String>,
    /// The NVIDIA driver: installed (its version), absent, or unknown.
    pub driver: DriverFact,
    /// Observed highest CUDA of the driver (NVML / `cuDriverGetVersion`).
    pub driver_cuda: Option<CudaVersion>,
    /// The CPU architecture, when known.
    pub arch: Option<Arch>,
    /// The Python version to install for, when known.
    pub python: Option<PyVersion>,
    /// JetPack and L4T, on a Jetson.
    pub jetson: Option<JetsonFact>,
}

impl PlannerFacts {
    fn is_jetson(&self) -> bool {
        self.jetson.is_some() || self.gpus.iter().any(GpuFact::is_tegra)
    }

    fn l4t(&self) -> Option<L4tVersion> {
        self.jetson.as_ref().and_then(|j| j.l4t)
    }

    fn jetpack_major(&self) -> Option<u32> {
        let j = self.jetson.as_ref()?;
        j.l4t
            .and_then(|l| gpukb_jetson::jetpack_major_for_r(l.major))
            .or_else(|| j.jetpack.as_deref()?.split('.').next()?.parse().ok())
    }

    /// Why this Jetson is newer than the tables: a JetPack above the newest
    /// JetPack, or an L4T above the newest L4T, of the JetPack table. Nothing
    /// in the tables is known to run there.
    fn jetson_newer_than_data(&self) -> Option<String> {
        let j = self.jetson.as_ref()?;
        let table = gpukb_jetson::tables::jetpack_table();
        let newest = table
            .iter()
            .filter_map(|r| Some((gpukb_jetson::version::major_minor(&r.jetpack)?, r)))
            .max_by_key(|(mm, r)| (*mm, r.l4t))?;
        let as_of = jetson_as_of();
        if let Some(jp) = &j.jetpack {
            if gpukb_jetson::version::major_minor(jp).is_some_and(|mm| mm > newest.0) {
                return Some(format!(
                    "JetPack {jp} is newer than my JetPack and Jetson wheel tables (newest JetPack {}, L4T {}; as of {as_of}): nothing in them is known to run on it",
                    newest.1.jetpack, newest.1.l4t
                ));
            }
        }
        let latest = gpukb_jetson::tables::latest_known_l4t()?;
        match j.l4t {
            Some(l) if l > latest && l.major > latest.major => Some(format!(
                "L4T {l} is newer than my JetPack and Jetson wheel tables (newest L4T {latest}; as of {as_of}): nothing in them is known to run on it"
            )),
            _ => None,
        }
    }

    /// The JetPack table row for this L4T, when known.
    fn jetpack_row(&self) -> Option<gpukb_jetson::tables::JetpackRow> {
        match gpukb_jetson::tables::lookup_l4t(self.l4t()?) {
            gpukb_jetson::tables::L4tLookup::Known(r) => Some(r),
            gpukb_jetson::tables::L4tLookup::Unknown { nearest_older, .. } => nearest_older,
        }
    }

    /// The highest CUDA the driver runs, as the rules use it.
    fn effective_driver_cuda(&self) -> EffectiveCuda {
        if let Some(c) = self.driver_cuda {
            return EffectiveCuda::Known(c);
        }
        if let DriverFact::Known { version, .. } = &self.driver {
            return match compat::branch_cuda(version.branch()) {
                BranchCuda::Known(c) => EffectiveCuda::Known(c),
                BranchCuda::NewerThanData { newest } => EffectiveCuda::NewerThanData(newest),
                BranchCuda::OlderThanData => EffectiveCuda::Known(CudaVersion::new(8, 0)),
            };
        }
        // Jetson: the GPU driver is part of L4T; its CUDA is JetPack's.
        if self.is_jetson() {
            if let Some(c) = self.jetpack_row().and_then(|r| r.cuda?.parse().ok()) {
                return EffectiveCuda::Known(c);
            }
        }
        EffectiveCuda::Unknown
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum EffectiveCuda {
    Known(CudaVersion),
    NewerThanData(u32),
    Unknown,
}

impl EffectiveCuda {
    /// For image decisions: an unknown or newer-than-data driver is taken to JIT anything.
    fn api(self) -> u32 {
        match self {
            EffectiveCuda::Known(c) => c.api(),
            _ => 99_000,
        }
    }
}

/// Which builds to consider: `2.5.1`, `2.5.1+cu124`, `2.5`, `>=2.4,<2.6`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TorchSpec {
    constraints: Vec<(Op, Release)>,
    /// `+cu124` of an exact build.
    pub variant: Option<String>,
    /// The spec as given, trimmed.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Prefix(usize),
    Ge,
    Gt,
    Le,
    Lt,
    Ne,
}

/// A `--torch` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--torch {0:?}: expected a version (2.5.1), a build (2.5.1+cu124) or a range (>=2.4,<2.6)")]
pub struct BadTorchSpec(pub String);

impl TorchSpec {
    /// Parses a spec; an empty string means every release.
    pub fn parse(s: &str) -> Result<TorchSpec, BadTorchSpec> {
        let bad = || BadTorchSpec(s.chars().take(60).collect());
        let mut spec = TorchSpec {
            text: s.trim().to_string(),
            ..TorchSpec::default()
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("==", Op::Eq),
                ("!=", Op::Ne),
                (">", Op::Gt),
                ("<", Op::Lt),
            ]
            .iter()
            .find_map(|(p, op)| part.strip_prefix(p).map(|r| (*op, r.trim())))
            .unwrap_or((Op::Eq, part));
            let (ver, variant) = match rest.split_once('+') {
                Some((v, var)) => (v, Some(var)),
                None => (rest, None),
            };
            if !ver.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                return Err(bad());
            }
            let r = Release::parse(ver).ok_or_else(bad)?;
            let dots = ver.split('.').count();
            let op = match op {
                Op::Eq if dots < 3 => Op::Prefix(dots),
                o => o,
            };
            if let Some(v) = variant {
                if op != Op::Eq || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                    return Err(bad());
                }
                spec.variant = Some(v.to_string());
            }
            spec.constraints.push((op, r));
        }
        Ok(spec)
    }

    /// Whether a release (and variant) is within the spec.
    pub fn matches(&self, r: &Release, variant: &str) -> bool {
        if self.variant.as_deref().is_some_and(|v| v != variant) {
            return false;
        }
        self.constraints.iter().all(|(op, want)| match op {
            Op::Eq => r.parts == want.parts,
            Op::Ne => r.parts != want.parts,
            Op::Prefix(n) => r.parts[..*n] == want.parts[..*n],
            Op::Ge => r.parts >= want.parts,
            Op::Gt => r.parts > want.parts,
            Op::Le => r.parts <= want.parts,
            Op::Lt => r.parts < want.parts,
        })
    }

    /// The lowest release the spec allows, when it has one.
    fn floor(&self) -> Option<&Release> {
        self.constraints
            .iter()
            .filter(|(op, _)| matches!(op, Op::Eq | Op::Prefix(_) | Op::Ge | Op::Gt))
            .map(|(_, r)| r)
            .max()
    }
}

/// Why a candidate runs or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema_doc::unit_variants_as_enum)]
pub enum Code {
    /// A check passed.
    #[schemars(description = UNPUBLISHED)]
    Ok,
    /// The build has no code for a GPU (or there is no GPU).
    #[schemars(description = UNPUBLISHED)]
    Arch,
    /// The driver is missing, too old, or does not drive a GPU.
    #[schemars(description = UNPUBLISHED)]
    Driver,
    /// No wheel for the machine's Python.
    #[schemars(description = UNPUBLISHED)]
    Python,
    /// Built for another platform (CPU architecture, Jetson or not).
    #[schemars(description = UNPUBLISHED)]
    Platform,
    /// A Jetson wheel for another JetPack or L4T.
    #[schemars(description = UNPUBLISHED)]
    Jetpack,
    /// Runs only by JIT-compiling PTX (slow first start).
    #[schemars(description = UNPUBLISHED)]
    PtxJit,
    /// Runs only through the CUDA forward-compatibility package.
    #[schemars(description = UNPUBLISHED)]
    ForwardCompat,
    /// The machine is newer than gpukb's tables: not judged.
    #[schemars(description = UNPUBLISHED)]
    NewerThanData,
    /// A fact needed is unknown: not judged.
    #[schemars(description = UNPUBLISHED)]
    Unknown,
}

/// One reason, about one GPU (index into `machine.gpus`) or the machine.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Reason {
    /// What kind of reason it is.
    #[schemars(description = UNPUBLISHED)]
    pub code: Code,
    /// The GPU it is about (an index into `machine.gpus`); `None` for the
    /// machine.
    #[schemars(description = UNPUBLISHED)]
    pub gpu: Option<usize>,
    /// The reason, in words.
    #[schemars(description = UNPUBLISHED)]
    pub text: String,
    /// The document or table the rule comes from.
    #[schemars(description = UNPUBLISHED)]
    pub source: String,
}

fn reason(
    code: Code,
    gpu: Option<usize>,
    text: impl Into<String>,
    source: impl Into<String>,
) -> Reason {
    Reason {
        code,
        gpu,
        text: text.into(),
        source: source.into(),
    }
}

/// How a build runs on the GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema_doc::unit_variants_as_enum)]
pub enum Via {
    /// Machine code for every GPU.
    #[schemars(description = UNPUBLISHED)]
    Sass,
    /// PTX JIT-compiled by the driver for at least one GPU.
    #[schemars(description = UNPUBLISHED)]
    PtxJit,
}

/// One candidate build and the verdict on it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Candidate {
    /// The PyTorch release (`2.9.1`).
    #[schemars(description = UNPUBLISHED)]
    pub version: String,
    /// The build variant (`cu128`, `cpu`, NVIDIA's `nv24.08` on Jetson).
    #[schemars(description = UNPUBLISHED)]
    pub variant: String,
    /// `linux-x86_64`, `linux-aarch64` or `jetson-jetpack-<version>`.
    #[schemars(description = UNPUBLISHED)]
    pub platform: String,
    /// Whether it runs on every machine given.
    #[schemars(description = UNPUBLISHED)]
    pub runs: bool,
    /// False when a fact or table row the verdict needs is unknown.
    #[schemars(description = UNPUBLISHED)]
    pub certain: bool,
    /// How it runs on the GPUs, when it runs.
    #[schemars(description = UNPUBLISHED)]
    pub via: Option<Via>,
    /// Every reason, the decisive one first.
    #[schemars(description = UNPUBLISHED)]
    pub reasons: Vec<Reason>,
    /// The pip index that serves it; `None` for a Jetson wheel NVIDIA
    /// publishes only as a URL.
    #[schemars(description = UNPUBLISHED)]
    pub index_url: Option<String>,
    /// Whether plain `pip install torch` from PyPI gets this build.
    #[schemars(description = UNPUBLISHED)]
    pub pypi_default: bool,
    /// How the build's GPU targets are known (`wheel_read`, `build_script`, …).
    pub known_from: KnownFrom,
    /// Where the build's row comes from.
    #[schemars(description = UNPUBLISHED)]
    pub source: String,
    /// When the build's row was last checked (`YYYY-MM-DD`).
    #[schemars(description = UNPUBLISHED)]
    pub as_of: String,
    #[serde(skip)]
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Official(TorchWheel),
    Jetson(JetsonWheel),
}

impl Candidate {
    fn release(&self) -> &Release {
        match &self.kind {
            Kind::Official(w) => &w.release,
            Kind::Jetson(w) => &w.release,
        }
    }
    fn cuda(&self) -> Option<CudaVersion> {
        match &self.kind {
            Kind::Official(w) => w.cuda,
            Kind::Jetson(w) => w.cuda,
        }
    }
}

/// The build to install.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Recommended {
    /// The PyTorch release.
    #[schemars(description = UNPUBLISHED)]
    pub version: String,
    /// The build variant (`cu128`).
    #[schemars(description = UNPUBLISHED)]
    pub variant: String,
    /// The pip index that serves it.
    #[schemars(description = UNPUBLISHED)]
    pub index_url: Option<String>,
    /// The exact command that installs it (`pip install torch==… --index-url …`).
    #[schemars(description = UNPUBLISHED)]
    pub command: String,
    /// How it runs on the GPUs.
    #[schemars(description = UNPUBLISHED)]
    pub via: Via,
    /// False when the verdict rests on an unknown fact.
    #[schemars(description = UNPUBLISHED)]
    pub certain: bool,
    /// Whether plain `pip install torch` from PyPI gets this build.
    #[schemars(description = UNPUBLISHED)]
    pub pypi_default: bool,
    /// The same install with uv, conda-forge, or a container on Jetson.
    pub alternatives: Vec<Alternative>,
    /// Why this build, in words.
    #[schemars(description = UNPUBLISHED)]
    pub why: String,
}

/// Another way to install the recommended build.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Alternative {
    /// The installer or source (`uv`, `conda-forge`, `jetson-containers`).
    #[schemars(description = UNPUBLISHED)]
    pub tool: String,
    /// The command to run.
    #[schemars(description = UNPUBLISHED)]
    pub command: String,
    /// What to know about it.
    #[schemars(description = UNPUBLISHED)]
    pub note: String,
}

/// The torch part of a plan.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TorchPlan {
    /// The build to install; `None` when no CUDA build runs.
    #[schemars(description = UNPUBLISHED)]
    pub recommended: Option<Recommended>,
    /// Every build within the `--torch` spec, with its verdict.
    #[schemars(description = UNPUBLISHED)]
    pub candidates: Vec<Candidate>,
}

/// The driver the GPUs should run for the recommended build.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DriverPlan {
    /// The driver branch to install (`580`); `None` on Jetson (the driver
    /// comes with L4T) or when no branch fits.
    #[schemars(description = UNPUBLISHED)]
    pub branch: Option<u32>,
    /// Whether a GPU here runs only with the open kernel modules (Blackwell,
    /// Grace Hopper).
    #[schemars(description = UNPUBLISHED)]
    pub open_modules_required: bool,
    /// Why this branch, or why none.
    #[schemars(description = UNPUBLISHED)]
    pub reason: String,
    /// The document or table the rule comes from.
    #[schemars(description = UNPUBLISHED)]
    pub source: String,
}

/// The CUDA toolkit to build extensions against the recommended build.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ToolkitPlan {
    /// The CUDA toolkit version (`12.8`): the recommended build's CUDA;
    /// `None` when no CUDA build is recommended.
    #[schemars(description = UNPUBLISHED)]
    pub version: Option<String>,
    /// Why, and what to compile for when the driver is older.
    #[schemars(description = UNPUBLISHED)]
    pub reason: String,
}

/// An NGC container judged for the machines.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ContainerVerdict {
    /// The image reference (`nvcr.io/nvidia/pytorch:25.01-py3`).
    #[schemars(description = UNPUBLISHED)]
    pub image: String,
    /// The CUDA release inside the image.
    #[schemars(description = UNPUBLISHED)]
    pub cuda: String,
    /// The driver that CUDA release ships with (the least that runs it
    /// without forward compatibility).
    #[schemars(description = UNPUBLISHED)]
    pub min_driver: Option<String>,
    /// Whether it runs on every machine given.
    #[schemars(description = UNPUBLISHED)]
    pub runs: bool,
    /// Every reason, machine by machine.
    #[schemars(description = UNPUBLISHED)]
    pub reasons: Vec<Reason>,
    /// The NGC release notes it comes from.
    #[schemars(description = UNPUBLISHED)]
    pub source: String,
}

/// One GPU in the plan's `machine` view.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GpuView {
    /// The GPU's name.
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// The compute capability.
    #[schemars(description = UNPUBLISHED)]
    pub cc: ComputeCapability,
    /// The product class.
    #[schemars(description = UNPUBLISHED)]
    pub class: GpuClass,
    /// Where it was learnt.
    #[schemars(description = UNPUBLISHED)]
    pub source: String,
    /// The machine it is in (when several were given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// The machine as the plan saw it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MachineView {
    /// `this machine`, `capture <dir>`, `described`, or `N machines` for the
    /// merged view.
    #[schemars(description = UNPUBLISHED)]
    pub label: String,
    /// The GPUs (of every machine, in the merged view).
    #[schemars(description = UNPUBLISHED)]
    pub gpus: Vec<GpuView>,
    /// The driver's version, when installed and known.
    #[schemars(description = UNPUBLISHED)]
    pub driver: Option<String>,
    /// `found`, `absent` (seen not to be installed) or `unknown`.
    pub driver_status: &'static str,
    /// The highest CUDA the driver runs: observed, else worked out from its
    /// branch (or JetPack).
    #[schemars(description = UNPUBLISHED)]
    pub driver_cuda: Option<String>,
    /// `x86_64` or `aarch64`, when known.
    #[schemars(description = UNPUBLISHED)]
    pub arch: Option<&'static str>,
    /// The Python version planned for (`3.12`), when known.
    #[schemars(description = UNPUBLISHED)]
    pub python: Option<String>,
    /// The JetPack release, on a Jetson.
    #[schemars(description = UNPUBLISHED)]
    pub jetpack: Option<String>,
    /// The L4T release, on a Jetson.
    #[schemars(description = UNPUBLISHED)]
    pub l4t: Option<String>,
}

/// `gpukb plan`'s answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Plan {
    /// [`SCHEMA_VERSION`].
    #[schemars(description = UNPUBLISHED)]
    pub schema_version: u32,
    /// The oldest as-of date of the table rows used (`YYYY-MM-DD`).
    #[schemars(description = UNPUBLISHED)]
    pub as_of: String,
    /// The machine planned for (several merged into one view).
    #[schemars(description = UNPUBLISHED)]
    pub machine: MachineView,
    /// Each machine, when several were given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<MachineView>,
    /// Facts about the input: newer than the tables, a bare driver branch, unknowns.
    pub notes: Vec<Reason>,
    /// The PyTorch build to install, and every candidate judged.
    #[schemars(description = UNPUBLISHED)]
    pub torch: TorchPlan,
    /// The driver branch that goes with it.
    #[schemars(description = UNPUBLISHED)]
    pub driver: DriverPlan,
    /// The CUDA toolkit to build extensions with.
    #[schemars(description = UNPUBLISHED)]
    pub toolkit: ToolkitPlan,
    /// NGC PyTorch containers, each judged.
    #[schemars(description = UNPUBLISHED)]
    pub containers: Vec<ContainerVerdict>,
}

impl Plan {
    /// 0 when something is recommended, 1 when nothing runs.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.torch.recommended.is_none())
    }
}

fn py_text(p: PyVersion) -> String {
    format!("{}.{}", p.0, p.1)
}

fn py_range(v: &[PyVersion]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if a != b => format!("{}–{}", py_text(*a), py_text(*b)),
        (Some(a), _) => py_text(*a),
        _ => "unknown".into(),
    }
}

/// Verdict on one build on one machine; reasons' GPU indices start at `offset`.
struct Judged {
    runs: bool,
    certain: bool,
    via: Option<Via>,
    reasons: Vec<Reason>,
}

fn judge_python(m: &PlannerFacts, have: &[PyVersion], release: &Release, out: &mut Judged) {
    let Some(py) = m.python else { return };
    if have.is_empty() {
        out.certain = false;
        out.reasons.push(reason(
            Code::Unknown,
            None,
            format!("the Python versions of torch {release} are not in my tables"),
            "torch_builds.csv",
        ));
    } else if !have.contains(&py) {
        out.runs = false;
        out.reasons.push(reason(
            Code::Python,
            None,
            format!(
                "torch {release} has wheels for Python {}, not {}",
                py_range(have),
                py_text(py)
            ),
            "the wheels' Python tags and Requires-Python on PyPI",
        ));
    }
}

fn judge_gpus(
    m: &PlannerFacts,
    images: Option<&[crate::target::FatbinImage]>,
    offset: usize,
    cuda: EffectiveCuda,
    out: &mut Judged,
) {
    if m.gpus.is_empty() {
        match &m.gpus_unknown {
            Some(why) => {
                out.certain = false;
                out.reasons.push(reason(
                    Code::Unknown,
                    None,
                    format!("the GPUs are unknown ({why})"),
                    "machine facts",
                ));
            }
            None => {
                out.runs = false;
                out.reasons.push(reason(
                    Code::Arch,
                    None,
                    "no NVIDIA GPU on this machine: a CUDA build has nothing to run on",
                    "machine facts",
                ));
            }
        }
        return;
    }
    let Some(images) = images else {
        out.runs = false;
        out.certain = false;
        out.reasons.push(reason(
            Code::Unknown,
            None,
            "this build's SASS/PTX targets are not verified in my tables",
            "torch_builds.csv",
        ));
        return;
    };
    for (i, g) in m.gpus.iter().enumerate() {
        let gi = Some(offset + i);
        let newer = g.newer_than_data();
        let usable: Vec<_> = if newer {
            images
                .iter()
                .copied()
                .filter(|im| im.kind == crate::target::ImageKind::Ptx)
                .collect()
        } else {
            images.to_vec()
        };
        if newer {
            out.reasons.push(reason(
                Code::NewerThanData,
                gi,
                format!(
                    "{} (CC {}) is newer than my GPU table (as of {}): only PTX counts",
                    g.name,
                    g.cc,
                    crate::gpus::GPUS_AS_OF
                ),
                "agent/facts/data/gpus.csv",
            ));
        }
        let v = compat::decide(g.cc.pair(), cuda.api(), &usable);
        match v.outcome {
            ImageOutcome::Sass => out.reasons.push(reason(
                Code::Ok,
                gi,
                format!("{}: {}", g.name, v.reason),
                SRC_BIN,
            )),
            ImageOutcome::PtxJit => {
                out.via = Some(Via::PtxJit);
                out.reasons.push(reason(
                    Code::PtxJit,
                    gi,
                    format!("{}: {}", g.name, v.reason),
                    SRC_BIN,
                ));
            }
            ImageOutcome::PtxTooNew => {
                out.runs = false;
                out.reasons.push(reason(
                    Code::Driver,
                    gi,
                    format!("{}: {}", g.name, v.reason),
                    "PTX ISA release history (PTX ISA manual); CUDA Compatibility guide",
                ));
            }
            ImageOutcome::NoImage => {
                out.runs = false;
                out.reasons.push(reason(
                    Code::Arch,
                    gi,
                    format!("{}: {}", g.name, v.reason),
                    SRC_BIN,
                ));
            }
        }
    }
}

fn judge_driver(m: &PlannerFacts, cuda: CudaVersion, offset: usize, out: &mut Judged) {
    let floor = compat::min_driver_for(cuda).unwrap_or("?");
    if let DriverFact::Known { version, .. } = &m.driver {
        for (i, g) in m.gpus.iter().enumerate() {
            if let Err(e) = compat::branch_supports_gpu(version.branch(), g.cc.pair()) {
                out.runs = false;
                out.reasons.push(reason(Code::Driver, Some(offset + i), format!("{}: {e}", g.name), "NVIDIA legacy GPU list; CUDA 12.8 release notes (Blackwell); compat-facts.md §1c"));
            } else if let Some(why) = driver_predates_gpu(m, g) {
                out.runs = false;
                out.reasons.push(reason(Code::Driver, Some(offset + i), why, "compat-facts.md §1d (CUDA release notes: the CUDA version that added each compute capability); CUDA 13.2 Update 2 release notes Table 3"));
            } else if let Some((why, source)) = driver_below_min_release(m, g) {
                out.runs = false;
                out.reasons
                    .push(reason(Code::Driver, Some(offset + i), why, &source));
            }
        }
    }
    match (&m.driver, m.effective_driver_cuda()) {
        (_, EffectiveCuda::NewerThanData(newest)) => out.reasons.push(reason(
            Code::NewerThanData,
            None,
            format!("driver {} is newer than my tables (R{newest}, as of {}): taken to run every CUDA they know", driver_text(&m.driver), compat::DRIVER_TABLE_AS_OF),
            SRC_BRANCH,
        )),
        (DriverFact::Absent(why), _) => {
            out.certain = false;
            out.reasons.push(reason(Code::Unknown, None, format!("no NVIDIA driver ({why}): CUDA {cuda} builds need driver >= {floor}"), SRC_MVC));
        }
        (DriverFact::Unknown(why), EffectiveCuda::Unknown) => {
            out.certain = false;
            out.reasons.push(reason(Code::Unknown, None, format!("the driver is unknown ({why}): CUDA {cuda} builds need driver >= {floor}"), SRC_MVC));
        }
        (_, EffectiveCuda::Unknown) => {
            out.certain = false;
            out.reasons.push(reason(Code::Unknown, None, "the driver's CUDA version is unknown", SRC_MVC));
        }
        (d, EffectiveCuda::Known(dc)) => {
            let release_ok = match (d, compat::min_driver_for(cuda)) {
                (DriverFact::Known { version, .. }, Some(f)) if cuda.major >= 11 => {
                    f.parse::<DriverVersion>().is_ok_and(|f| version >= &f || dc >= cuda)
                }
                _ => true,
            };
            match compat::driver_runs_cuda(dc, cuda) {
                DriverCompat::Native => out.reasons.push(reason(Code::Ok, None, format!("the driver runs CUDA {dc} >= {cuda} natively"), SRC_BRANCH)),
                DriverCompat::MinorVersion if release_ok => out.reasons.push(reason(
                    Code::Ok,
                    None,
                    format!("the driver (CUDA {dc}) runs CUDA {cuda} under minor-version compatibility (driver >= {floor}); PTX of CUDA {cuda} would not JIT"),
                    SRC_MVC,
                )),
                _ => {
                    out.runs = false;
                    out.reasons.push(reason(
                        Code::Driver,
                        None,
                        format!("CUDA {cuda} builds need driver >= {floor}; this driver ({}) runs CUDA {dc}: \"CUDA driver version is insufficient\"", driver_text(d)),
                        SRC_MVC,
                    ));
                    let fwd: Vec<Option<bool>> = m.gpus.iter().map(|g| g.class.forward_compat()).collect();
                    if !fwd.is_empty() && fwd.iter().all(|f| *f == Some(true)) {
                        out.reasons.push(reason(
                            Code::ForwardCompat,
                            None,
                            format!("these GPUs support forward compatibility: installing cuda-compat-{}-{} would let it run without a driver upgrade", cuda.major, cuda.minor),
                            SRC_FWD,
                        ));
                    } else if fwd.iter().any(|f| f.is_none()) {
                        out.reasons.push(reason(
                            Code::ForwardCompat,
                            None,
                            format!("cuda-compat-{}-{} works only on datacenter GPUs, select NGC Server Ready RTX SKUs and Jetson", cuda.major, cuda.minor),
                            SRC_FWD,
                        ));
                    }
                }
            }
        }
    }
}

/// A driver older than a GPU: the GPU arrived with a CUDA newer than the
/// driver's branch runs natively, so the driver does not drive it at all
/// (forward compatibility cannot help: newcomer #11, H100 on 390.48).
fn driver_predates_gpu(m: &PlannerFacts, g: &GpuFact) -> Option<String> {
    let DriverFact::Known { version, .. } = &m.driver else {
        return None;
    };
    // A GPU newer than the tables has no known first CUDA; Jetson's driver is L4T's.
    if g.is_tegra() || g.newer_than_data() || !g.in_table {
        return None;
    }
    let BranchCuda::Known(dc) = compat::branch_cuda(version.branch()) else {
        return None;
    };
    let first = compat::first_cuda_for_cc(g.cc.pair());
    (first > dc).then(|| {
        format!(
            "{} (CC {}) arrived with CUDA {first}; driver {version} (R{}) runs CUDA {dc} and does not drive it",
            g.name,
            g.cc,
            version.branch()
        )
    })
}

/// A driver older than the least release NVIDIA names for a GPU (HGX B200:
/// 570.133.20; B300/GB300: 580.82.07), though its branch drives the
/// generation (kb-audit doubt 1: `--gpu B200 --driver 570` approved 570.26).
fn driver_below_min_release(m: &PlannerFacts, g: &GpuFact) -> Option<(String, String)> {
    let DriverFact::Known { version, .. } = &m.driver else {
        return None;
    };
    let min = crate::driver_choice::min_release_by_name(&g.name)?;
    let least: DriverVersion = min.version.parse().ok()?;
    (*version < least).then(|| {
        (
            format!(
                "{}: driver {version} is older than {}, the least NVIDIA names for {}",
                g.name, min.version, min.gpu
            ),
            min.source,
        )
    })
}

fn driver_text(d: &DriverFact) -> String {
    match d {
        DriverFact::Known { version, .. } => version.to_string(),
        DriverFact::Absent(_) => "none installed".into(),
        DriverFact::Unknown(_) => "unknown".into(),
    }
}

fn judge_official(w: &TorchWheel, m: &PlannerFacts, offset: usize) -> Judged {
    let mut out = Judged {
        runs: true,
        certain: true,
        via: w.cuda.map(|_| Via::Sass),
        reasons: Vec::new(),
    };
    match m.arch {
        None => {
            out.certain = false;
            out.reasons.push(reason(
                Code::Unknown,
                None,
                "the CPU architecture is unknown",
                "machine facts",
            ));
        }
        Some(a) if a != w.arch => {
            out.runs = false;
            out.reasons.push(reason(
                Code::Platform,
                None,
                format!(
                    "a linux-{} build; this machine is {}",
                    w.arch.as_str(),
                    a.as_str()
                ),
                "the wheel's platform tag",
            ));
        }
        _ => {}
    }
    if w.cuda.is_some() && m.is_jetson() && judge_jetson_newer(m, &mut out) {
        judge_python(m, &w.python, &w.release, &mut out);
        return out;
    }
    if w.cuda.is_some() && m.is_jetson() {
        match m.jetpack_major() {
            Some(j) if j >= 7 => {}
            Some(j) => {
                out.runs = false;
                out.reasons.push(reason(
                    Code::Jetpack,
                    None,
                    format!("official aarch64 CUDA wheels are SBSA builds; JetPack {j} drives the GPU with the Tegra CUDA stack: use NVIDIA's Jetson wheel"),
                    "compat-facts.md §2b (Orin is the exception to SBSA unification); NVIDIA 'Installing PyTorch for Jetson Platform'",
                ));
            }
            None => {
                out.certain = false;
                out.reasons.push(reason(
                    Code::Unknown,
                    None,
                    "a Jetson of unknown JetPack: SBSA wheels run only from JetPack 7",
                    SRC_JETSON,
                ));
            }
        }
    }
    judge_python(m, &w.python, &w.release, &mut out);
    // An aarch64 CUDA build only on PyTorch's index: its arch list is what the
    // build script sets (filtered per CUDA version on aarch64, compat-facts
    // errata 5), never read from a wheel: the verdict stays uncertain.
    if w.cuda.is_some() && w.arch == Arch::Aarch64 && w.known_from() == KnownFrom::BuildScript {
        out.certain = false;
        out.reasons.push(reason(
            Code::Unknown,
            None,
            format!("this aarch64 build is on PyTorch's index only ({}): its GPU targets are the build script's arch list, not read from the wheel", w.index_url),
            &w.source,
        ));
    }
    let Some(cuda) = w.cuda else {
        out.reasons.push(reason(
            Code::Ok,
            None,
            "CPU-only build: runs without using the GPU",
            &w.source,
        ));
        return out;
    };
    judge_gpus(
        m,
        w.images().as_deref(),
        offset,
        m.effective_driver_cuda(),
        &mut out,
    );
    if !m.is_jetson() {
        judge_driver(m, cuda, offset, &mut out);
    }
    out
}

fn judge_jetson(w: &JetsonWheel, m: &PlannerFacts, offset: usize) -> Judged {
    let mut out = Judged {
        runs: true,
        certain: true,
        via: Some(Via::Sass),
        reasons: Vec::new(),
    };
    if !m.is_jetson() {
        out.runs = false;
        out.reasons.push(reason(
            Code::Platform,
            None,
            format!(
                "NVIDIA's Jetson wheel for JetPack {}: this machine is not a Jetson",
                w.jetpack
            ),
            &w.source,
        ));
        return out;
    }
    if judge_jetson_newer(m, &mut out) {
        return out;
    }
    match m.l4t() {
        Some(l) if l >= w.l4t_min && l <= w.l4t_max => out.reasons.push(reason(
            Code::Ok,
            None,
            format!(
                "built for JetPack {} (L4T {}–{}); this is L4T {l}",
                w.jetpack, w.l4t_min, w.l4t_max
            ),
            &w.source,
        )),
        Some(l) if l > w.l4t_max && l.major == w.l4t_max.major && l4t_newer_than_data(l) => {
            out.certain = false;
            out.reasons.push(reason(
                Code::NewerThanData,
                None,
                format!("L4T {l} is newer than my JetPack table (as of {}): assumed to keep R{}'s CUDA stack", w.as_of, l.major),
                SRC_JETSON,
            ));
        }
        Some(l) => {
            out.runs = false;
            out.reasons.push(reason(
                Code::Jetpack,
                None,
                format!(
                    "built for JetPack {} (L4T {}–{}, CUDA {}); this is L4T {l}",
                    w.jetpack,
                    w.l4t_min,
                    w.l4t_max,
                    w.cuda.map_or("?".into(), |c| c.to_string())
                ),
                &w.source,
            ));
        }
        None => {
            out.certain = false;
            out.reasons.push(reason(
                Code::Unknown,
                None,
                "the L4T release is unknown",
                SRC_JETSON,
            ));
        }
    }
    judge_python(m, &w.python, &w.release, &mut out);
    let images = w.images();
    judge_gpus(m, Some(&images), offset, EffectiveCuda::Unknown, &mut out);
    out
}

/// Whether an L4T release is newer than every JetPack-table row of its R-major.
fn l4t_newer_than_data(l: L4tVersion) -> bool {
    let same: Vec<L4tVersion> = gpukb_jetson::tables::jetpack_table()
        .iter()
        .map(|r| r.l4t)
        .filter(|r| r.major == l.major)
        .collect();
    match same.iter().max() {
        Some(max) => l > *max,
        None => gpukb_jetson::tables::latest_known_l4t().is_some_and(|t| l > t),
    }
}

/// As-of date of the Jetson tables (the newest row of `jetson_wheels.csv`).
fn jetson_as_of() -> String {
    builds::jetson_wheels()
        .iter()
        .map(|w| w.as_of.as_str())
        .max()
        .unwrap_or(compat::DRIVER_TABLE_AS_OF)
        .to_string()
}

/// A Jetson newer than the tables: no CUDA build is known to run (issue 23 §5).
fn judge_jetson_newer(m: &PlannerFacts, out: &mut Judged) -> bool {
    let Some(why) = m.jetson_newer_than_data() else {
        return false;
    };
    out.runs = false;
    out.certain = false;
    out.reasons
        .push(reason(Code::NewerThanData, None, why, SRC_JETSON));
    true
}

fn combine(parts: Vec<Judged>) -> Judged {
    let mut out = Judged {
        runs: true,
        certain: true,
        via: None,
        reasons: Vec::new(),
    };
    for p in parts {
        out.runs &= p.runs;
        out.certain &= p.certain;
        out.via = match (out.via, p.via) {
            (Some(Via::PtxJit), _) | (_, Some(Via::PtxJit)) => Some(Via::PtxJit),
            (a, b) => a.or(b),
        };
        out.reasons.extend(p.reasons);
    }
    out
}

fn judge_all<F: Fn(&PlannerFacts, usize) -> Judged>(machines: &[PlannerFacts], f: F) -> Judged {
    let mut offset = 0;
    let several = machines.len() > 1;
    let parts = machines
        .iter()
        .map(|m| {
            let mut j = f(m, offset);
            offset += m.gpus.len();
            if several {
                for r in &mut j.reasons {
                    r.text = format!("{}: {}", m.label, r.text);
                }
            }
            j
        })
        .collect();
    combine(parts)
}

fn candidates(machines: &[PlannerFacts], spec: &TorchSpec) -> Vec<Candidate> {
    let mut out = Vec::new();
    let any_jetson = machines.iter().any(PlannerFacts::is_jetson);
    for w in builds::torch_wheels()
        .iter()
        .filter(|w| spec.matches(&w.release, &w.variant))
    {
        let j = judge_all(machines, |m, o| judge_official(w, m, o));
        out.push(Candidate {
            version: w.release.to_string(),
            variant: w.variant.clone(),
            platform: format!("linux-{}", w.arch.as_str()),
            runs: j.runs,
            certain: j.certain,
            via: if j.runs { j.via } else { None },
            reasons: j.reasons,
            index_url: Some(w.index_url.clone()),
            pypi_default: w.pypi_default,
            known_from: w.known_from(),
            source: w.source.clone(),
            as_of: w.as_of.clone(),
            kind: Kind::Official(w.clone()),
        });
    }
    for w in builds::jetson_wheels()
        .iter()
        .filter(|w| spec.matches(&w.release, &w.variant))
    {
        let j = judge_all(machines, |m, o| judge_jetson(w, m, o));
        out.push(Candidate {
            version: w.release.to_string(),
            variant: w.variant.clone(),
            platform: format!("jetson-jetpack-{}", w.jetpack),
            runs: j.runs && any_jetson,
            certain: j.certain,
            via: if j.runs { j.via } else { None },
            reasons: j.reasons,
            index_url: (!w.index_url.is_empty()).then(|| w.index_url.clone()),
            pypi_default: false,
            known_from: KnownFrom::NvidiaJetson,
            source: w.source.clone(),
            as_of: w.as_of.clone(),
            kind: Kind::Jetson(w.clone()),
        });
    }
    out
}

fn driver_known(machines: &[PlannerFacts]) -> bool {
    machines
        .iter()
        .all(|m| !matches!(m.effective_driver_cuda(), EffectiveCuda::Unknown))
}

/// Policy §4 over judged candidates.
fn pick<'a>(cands: &'a [Candidate], machines: &[PlannerFacts]) -> Option<&'a Candidate> {
    let cuda_runs: Vec<&Candidate> = cands
        .iter()
        .filter(|c| c.runs && c.cuda().is_some())
        .collect();
    let known_driver = driver_known(machines);
    let best = |via: Via| -> Option<&Candidate> {
        let set: Vec<&Candidate> = cuda_runs
            .iter()
            .copied()
            .filter(|c| c.via == Some(via))
            .collect();
        let newest = set.iter().map(|c| c.release()).max()?.clone();
        set.into_iter()
            .filter(|c| *c.release() == newest)
            .max_by(|a, b| {
                let key = |c: &Candidate| (c.certain, c.cuda(), c.pypi_default);
                let alt = |c: &Candidate| (c.certain, c.pypi_default, c.cuda());
                if known_driver {
                    key(a).cmp(&key(b))
                } else {
                    alt(a).cmp(&alt(b))
                }
            })
    };
    best(Via::Sass).or_else(|| best(Via::PtxJit))
}

fn recommend(c: &Candidate, machines: &[PlannerFacts]) -> Recommended {
    let m0 = &machines[0];
    let driver_cuda = machines
        .iter()
        .filter_map(|m| match m.effective_driver_cuda() {
            EffectiveCuda::Known(c) => Some(c),
            _ => None,
        })
        .min();
    let mut alternatives = Vec::new();
    let (command, why) = match &c.kind {
        Kind::Official(w) => {
            let pkgs = pinned_packages(w);
            let cmd = pip_command(w);
            // An explicit --torch-backend=cuXXX names the index; uv reads
            // UV_CUDA_DRIVER_VERSION (a driver version, 550.144.03) only under
            // --torch-backend=auto (astral-sh/uv#12070, crates/uv-torch), so it
            // is not set (kb-audit E3: "=13.0" was a CUDA version).
            alternatives.push(Alternative {
                tool: "uv".into(),
                command: format!("uv pip install {pkgs} --torch-backend={}", w.variant),
                note: "--torch-backend picks the same index as the pip command".into(),
            });
            if let Some(cuda) = w.cuda {
                let over = driver_cuda.unwrap_or(cuda);
                alternatives.push(Alternative {
                    tool: "conda-forge".into(),
                    command: format!("CONDA_OVERRIDE_CUDA={over} conda install -c conda-forge pytorch={} cuda-version={cuda}", w.release),
                    note: "conda-forge builds its own arch list; the pytorch channel stopped at 2.5".into(),
                });
            }
            let mut missing = Vec::new();
            if w.torchvision.is_empty() {
                missing.push("torchvision");
            }
            if w.torchaudio.is_empty() {
                missing.push("torchaudio");
            }
            let missing = if missing.is_empty() {
                String::new()
            } else {
                format!(
                    "; no {} release on PyPI pins torch {}, so none is pinned here",
                    missing.join(" or "),
                    w.release
                )
            };
            let default = if w.pypi_default {
                format!(
                    " (the PyPI default build: plain `pip install torch=={}` gets it too)",
                    w.release
                )
            } else {
                String::new()
            };
            if w.arch == Arch::Aarch64 && machines.iter().any(PlannerFacts::is_jetson) {
                // Only the SBSA indexes seen to exist (sbsa/cu129, sbsa/cu130;
                // kb-audit doubtful 2: no sbsa/cu132): the index's own build.
                let index = if w.variant == "cu129" {
                    "cu129"
                } else {
                    "cu130"
                };
                alternatives.push(Alternative {
                    tool: "jetson-ai-lab".into(),
                    command: format!("pip install torch --index-url https://pypi.jetson-ai-lab.io/sbsa/{index}"),
                    note: format!("the community index for Thor (SBSA), not the jp7 one: its own torch build for CUDA {index}, not the {} build above; it moved domains and lost wheels before (dusty-nv/jetson-containers#1462); as of 2026-12-01", w.variant),
                });
            }
            (cmd, format!("newest torch whose build runs {} on every GPU; {} is the newest CUDA the driver runs{default}{missing}", via_text(c.via), w.variant))
        }
        Kind::Jetson(w) => {
            // NVIDIA's wheel by its download URL: `pip install torch==X` on
            // aarch64 would fetch PyPI's CPU-only wheel (kb-audit E5).
            let cmd = if w.wheel_url.is_empty() {
                format!(
                    "# no pip command: download NVIDIA's JetPack {} wheel (torch {}) from {}",
                    w.jetpack,
                    w.release,
                    if w.index_url.is_empty() {
                        &w.source
                    } else {
                        &w.index_url
                    }
                )
            } else if !w.wheel_file.is_empty() {
                // pip refuses a URL whose last part is not a wheel file name.
                format!(
                    "wget -O {f} {} && pip3 install {f}",
                    w.wheel_url,
                    f = w.wheel_file
                )
            } else {
                format!("pip install {}", w.wheel_url)
            };
            let l4t = m0.l4t().map_or("r36.4.0".into(), |l| format!("r{l}"));
            // The index the KB's Jetson entries name for JetPack 6.1/6.2 (CUDA 12.6):
            // plan and search name the same sources (newcomer #13).
            if w.cuda == Some(CudaVersion::new(12, 6)) {
                alternatives.push(Alternative {
                    tool: "jetson-ai-lab".into(),
                    command: "pip install torch torchvision --index-url https://pypi.jetson-ai-lab.io/jp6/cu126".into(),
                    note: "the community index the KB's Jetson entries name for JetPack 6.1/6.2 (CUDA 12.6): newer torch builds than NVIDIA's redist; it moved domains and lost wheels before (dusty-nv/jetson-containers#1462); as of 2026-12-01".into(),
                });
            }
            alternatives.push(Alternative {
                tool: "jetson-containers".into(),
                command: "jetson-containers run $(autotag pytorch)".into(),
                note: format!("dustynv/pytorch images are tagged by L4T ({l4t}); autotag falls back to a default JetPack for an unknown L4T (dusty-nv/jetson-containers#875)"),
            });
            (
                cmd,
                format!(
                    "NVIDIA's wheel for JetPack {} carries SASS for this Jetson's GPU",
                    w.jetpack
                ),
            )
        }
    };
    Recommended {
        version: c.version.clone(),
        variant: c.variant.clone(),
        index_url: c.index_url.clone(),
        command,
        via: c.via.unwrap_or(Via::Sass),
        certain: c.certain,
        pypi_default: c.pypi_default,
        alternatives,
        why,
    }
}

/// `torch==X torchvision==Y torchaudio==Z`, the companions pinned where PyPI pins them.
fn pinned_packages(w: &TorchWheel) -> String {
    let mut pkgs = format!("torch=={}", w.release);
    if !w.torchvision.is_empty() {
        pkgs.push_str(&format!(" torchvision=={}", w.torchvision));
    }
    if !w.torchaudio.is_empty() {
        pkgs.push_str(&format!(" torchaudio=={}", w.torchaudio));
    }
    pkgs
}

/// The pip command that installs exactly this build.
pub fn pip_command(w: &TorchWheel) -> String {
    format!(
        "pip install {} --index-url {}",
        pinned_packages(w),
        w.index_url
    )
}

fn via_text(v: Option<Via>) -> &'static str {
    match v {
        Some(Via::PtxJit) => "only through PTX JIT (slow first start, no arch-specific kernels)",
        _ => "natively (SASS)",
    }
}

fn plan_driver(machines: &[PlannerFacts], rec: Option<&Candidate>) -> DriverPlan {
    let gpus: Vec<&GpuFact> = machines.iter().flat_map(|m| &m.gpus).collect();
    let open = gpus
        .iter()
        .any(|g| compat::needs_open_modules(g.cc.pair(), &g.name));
    if machines.iter().all(PlannerFacts::is_jetson) {
        return DriverPlan {
            branch: None,
            open_modules_required: false,
            reason: "on Jetson the GPU driver is part of Jetson Linux (L4T): upgrade JetPack, not the driver".into(),
            source: SRC_JETSON.into(),
        };
    }
    let ccs: Vec<ComputeCapability> = gpus.iter().map(|g| g.cc).collect();
    let need = rec.and_then(Candidate::cuda);
    if ccs.iter().any(|c| c.major == 3) {
        return DriverPlan {
            branch: Some(470),
            open_modules_required: false,
            reason: "Kepler GPUs: R470 is the last branch that drives them (CUDA 11.4 natively, 11.x under minor-version compatibility)".into(),
            source: "NVIDIA legacy GPU list; compat-facts.md §1c".into(),
        };
    }
    match crate::select::pick_driver_branch(&ccs, need) {
        Ok(b) => {
            let legacy = ccs
                .iter()
                .any(|c| matches!(c.pair(), (5, _) | (6, _) | (7, 0)));
            let mut why = match need {
                Some(n) => format!("R{b} runs CUDA {n} builds (natively or under minor-version compatibility: driver >= {})", compat::min_driver_for(n).unwrap_or("?")),
                None => format!("R{b} runs CUDA 12.x and 13.0 builds"),
            };
            if legacy {
                why.push_str(&format!(
                    "; R{} is the last branch for Maxwell, Pascal and Volta: stay on it",
                    crate::select::PROPOSED_BRANCH
                ));
            }
            if open {
                why.push_str("; Blackwell and Grace Hopper need NVIDIA's open kernel modules");
            }
            let mut mins: Vec<crate::driver_choice::MinRelease> = gpus
                .iter()
                .filter_map(|g| crate::driver_choice::min_release_by_name(&g.name))
                .collect();
            mins.sort_by(|a, b| a.gpu.cmp(&b.gpu));
            mins.dedup();
            let mut source = format!("{SRC_MVC}; NVIDIA driver installation guide (open modules); compat-facts.md §1c (legacy branches)");
            for m in &mins {
                why.push_str(&format!("; {} needs {} or later", m.gpu, m.version));
                source.push_str(&format!("; {}", m.source));
            }
            let installed: Vec<String> = machines
                .iter()
                .filter_map(|m| match &m.driver {
                    DriverFact::Known { version, .. }
                        if version.branch() >= b
                            && m.gpus
                                .iter()
                                .all(|g| driver_below_min_release(m, g).is_none()) =>
                    {
                        Some(version.to_string())
                    }
                    _ => None,
                })
                .collect();
            if installed.len() == machines.len() {
                why.push_str(&format!(
                    "; the installed {} already does",
                    installed.join(", ")
                ));
            }
            DriverPlan {
                branch: Some(b),
                open_modules_required: open,
                reason: why,
                source,
            }
        }
        Err(e) => DriverPlan {
            branch: None,
            open_modules_required: open,
            reason: e,
            source: "compat-facts.md §1c".into(),
        },
    }
}

fn plan_toolkit(machines: &[PlannerFacts], rec: Option<&Candidate>) -> ToolkitPlan {
    let Some(cuda) = rec.and_then(Candidate::cuda) else {
        return ToolkitPlan {
            version: None,
            reason: "no CUDA build is recommended".into(),
        };
    };
    let mut why = format!("build CUDA extensions for torch {}+{} with CUDA toolkit {cuda}: torch.utils.cpp_extension requires the same CUDA major", rec.map_or("", |c| &c.version), rec.map_or("", |c| &c.variant));
    let low = machines
        .iter()
        .filter_map(|m| match m.effective_driver_cuda() {
            EffectiveCuda::Known(c) if c < cuda => Some(c),
            _ => None,
        })
        .min();
    if let Some(d) = low {
        why.push_str(&format!("; the driver runs CUDA {d}: compile SASS for your GPUs (TORCH_CUDA_ARCH_LIST), since CUDA {cuda} PTX will not JIT on it (222)"));
    }
    ToolkitPlan {
        version: Some(cuda.to_string()),
        reason: why,
    }
}

/// Judges one NGC container image against every machine: whether it runs,
/// and why, in the order the checks are made.
fn judge_container(c: &builds::Container, machines: &[PlannerFacts]) -> ContainerVerdict {
    let mut reasons = Vec::new();
    let mut runs = true;
    let mut offset = 0;
    for m in machines {
        runs &= container_machine_reasons(c, m, &mut reasons);
        runs &= container_gpu_reasons(c, m, offset, &mut reasons);
        offset += m.gpus.len();
        if m.is_jetson() {
            continue;
        }
        let (r, ok) = container_driver_cuda_reason(c, m);
        runs &= ok;
        reasons.push(r);
    }
    drop_single_machine_label(machines, &mut reasons);
    ContainerVerdict {
        image: c.image.clone(),
        cuda: c.cuda.to_string(),
        min_driver: compat::toolkit_driver(c.cuda).map(str::to_string),
        runs,
        reasons,
        source: c.source.clone(),
    }
}

/// The machine-wide reasons an image cannot run on `m` (platform, data age,
/// no GPU, no driver), pushed onto `reasons`; false when any applies.
fn container_machine_reasons(
    c: &builds::Container,
    m: &PlannerFacts,
    reasons: &mut Vec<Reason>,
) -> bool {
    let mut runs = true;
    if m.is_jetson() && m.jetpack_major().is_none_or(|j| j < 7) {
        runs = false;
        reasons.push(reason(Code::Platform, None, format!("{}: NGC's PyTorch images are x86_64/SBSA; JetPack < 7 needs the l4t-pytorch images", m.label), &c.source));
    }
    if let Some(why) = m.jetson_newer_than_data() {
        runs = false;
        reasons.push(reason(
            Code::NewerThanData,
            None,
            format!("{}: {why}", m.label),
            SRC_JETSON,
        ));
    }
    if m.gpus.is_empty() {
        runs = false;
        reasons.push(match &m.gpus_unknown {
            Some(why) => reason(
                Code::Unknown,
                None,
                format!("{}: the GPUs are unknown ({why})", m.label),
                "machine facts",
            ),
            None => reason(
                Code::Arch,
                None,
                format!(
                    "{}: no NVIDIA GPU: the image's CUDA has nothing to run on",
                    m.label
                ),
                "machine facts",
            ),
        });
    }
    if let DriverFact::Absent(why) = &m.driver {
        runs = false;
        reasons.push(reason(
            Code::Driver,
            None,
            format!(
                "{}: no NVIDIA driver ({why}): containers use the host's driver",
                m.label
            ),
            "NVIDIA Container Toolkit: the driver stays on the host",
        ));
    }
    runs
}

/// The per-GPU reasons an image cannot run on `m` (the driver does not drive
/// the GPU, the image's CUDA is too old for it or no longer targets it),
/// numbered from `offset` across machines; false when any applies.
fn container_gpu_reasons(
    c: &builds::Container,
    m: &PlannerFacts,
    offset: usize,
    reasons: &mut Vec<Reason>,
) -> bool {
    let min_cc = if c.cuda.major >= 13 {
        ComputeCapability::new(7, 5)
    } else {
        ComputeCapability::new(5, 0)
    };
    let mut runs = true;
    for (i, g) in m.gpus.iter().enumerate() {
        if let DriverFact::Known { version, .. } = &m.driver {
            let unsupported = compat::branch_supports_gpu(version.branch(), g.cc.pair())
                .err()
                .or_else(|| driver_predates_gpu(m, g));
            if let Some(e) = unsupported {
                runs = false;
                reasons.push(reason(
                    Code::Driver,
                    Some(offset + i),
                    format!("{}: {e}", g.name),
                    "NVIDIA legacy GPU list; compat-facts.md §1c/§1d",
                ));
            } else if let Some((why, source)) = driver_below_min_release(m, g) {
                runs = false;
                reasons.push(reason(Code::Driver, Some(offset + i), why, &source));
            }
        }
        let first = compat::first_cuda_for_cc(g.cc.pair());
        if first > c.cuda {
            runs = false;
            reasons.push(reason(
                Code::Arch,
                Some(offset + i),
                format!(
                    "{} (CC {}) needs CUDA {first} or later; this image is CUDA {}",
                    g.name, g.cc, c.cuda
                ),
                "compat-facts.md §1d (CUDA release notes)",
            ));
        } else if g.cc < min_cc {
            runs = false;
            reasons.push(reason(
                Code::Arch,
                Some(offset + i),
                format!(
                    "{} (CC {}): CUDA {} no longer targets it",
                    g.name, g.cc, c.cuda
                ),
                "CUDA 13.2 Update 2 release notes §2.6; compat-facts.md §1d",
            ));
        }
    }
    runs
}

/// Whether the driver of a (non-Jetson) machine runs the image's CUDA,
/// directly or through the container's forward-compatibility libraries: the
/// one reason that says so, and false when it does not.
fn container_driver_cuda_reason(c: &builds::Container, m: &PlannerFacts) -> (Reason, bool) {
    match m.effective_driver_cuda() {
        EffectiveCuda::Known(d) if d >= c.cuda => (
            reason(
                Code::Ok,
                None,
                format!("{}: the driver runs CUDA {d} >= {}", m.label, c.cuda),
                SRC_BRANCH,
            ),
            true,
        ),
        EffectiveCuda::Known(d) => {
            let fwd = !m.gpus.is_empty()
                && m.gpus
                    .iter()
                    .all(|g| g.class.forward_compat() == Some(true));
            if fwd {
                (reason(Code::ForwardCompat, None, format!("{}: driver CUDA {d} < {}: runs through the container's forward-compatibility libraries (datacenter GPUs)", m.label, c.cuda), SRC_FWD), true)
            } else {
                (
                    reason(
                        Code::Driver,
                        None,
                        format!(
                            "{}: the image needs a CUDA {} driver (>= {}); this one runs CUDA {d}",
                            m.label,
                            c.cuda,
                            compat::toolkit_driver(c.cuda).unwrap_or("?")
                        ),
                        &c.source,
                    ),
                    false,
                )
            }
        }
        EffectiveCuda::NewerThanData(_) => (
            reason(
                Code::NewerThanData,
                None,
                format!("{}: the driver is newer than my tables", m.label),
                SRC_BRANCH,
            ),
            true,
        ),
        EffectiveCuda::Unknown => (
            reason(
                Code::Unknown,
                None,
                format!("{}: the driver is unknown", m.label),
                SRC_BRANCH,
            ),
            true,
        ),
    }
}

/// With one machine, its `label: ` prefix says nothing: drop it from the
/// reasons' text.
fn drop_single_machine_label(machines: &[PlannerFacts], reasons: &mut [Reason]) {
    if let [m] = machines {
        let prefix = format!("{}: ", m.label);
        for r in reasons {
            if let Some(t) = r.text.strip_prefix(&prefix) {
                r.text = t.to_string();
            }
        }
    }
}

fn view(m: &PlannerFacts, several: bool) -> MachineView {
    MachineView {
        label: m.label.clone(),
        gpus: m
            .gpus
            .iter()
            .map(|g| GpuView {
                name: g.name.clone(),
                cc: g.cc,
                class: g.class,
                source: g.source.clone(),
                machine: several.then(|| m.label.clone()),
            })
            .collect(),
        driver: match &m.driver {
            DriverFact::Known { version, .. } => Some(version.to_string()),
            _ => None,
        },
        driver_status: match &m.driver {
            DriverFact::Known { .. } => "found",
            DriverFact::Absent(_) => "absent",
            DriverFact::Unknown(_) => "unknown",
        },
        driver_cuda: match m.effective_driver_cuda() {
            EffectiveCuda::Known(c) if !matches!(m.driver, DriverFact::Absent(_)) => {
                Some(c.to_string())
            }
            _ => None,
        },
        arch: m.arch.map(Arch::as_str),
        python: m.python.map(py_text),
        jetpack: m.jetson.as_ref().and_then(|j| j.jetpack.clone()),
        l4t: m.l4t().map(|l| l.to_string()),
    }
}

fn notes(machines: &[PlannerFacts], spec: &TorchSpec) -> Vec<Reason> {
    let mut out = Vec::new();
    let mut offset = 0;
    for m in machines {
        if let DriverFact::Known { note: Some(n), .. } = &m.driver {
            out.push(reason(Code::Ok, None, n.clone(), SRC_BRANCH));
        }
        if let EffectiveCuda::NewerThanData(newest) = m.effective_driver_cuda() {
            out.push(reason(
                Code::NewerThanData,
                None,
                format!(
                    "driver {} is newer than my tables (newest R{newest}, as of {})",
                    driver_text(&m.driver),
                    compat::DRIVER_TABLE_AS_OF
                ),
                SRC_BRANCH,
            ));
        }
        for (i, g) in m.gpus.iter().enumerate() {
            if g.newer_than_data() {
                out.push(reason(
                    Code::NewerThanData,
                    Some(offset + i),
                    format!(
                        "{} (CC {}) is newer than my GPU table (as of {})",
                        g.name,
                        g.cc,
                        crate::gpus::GPUS_AS_OF
                    ),
                    "agent/facts/data/gpus.csv",
                ));
            }
        }
        offset += m.gpus.len();
        if let Some(why) = m.jetson_newer_than_data() {
            out.push(reason(Code::NewerThanData, None, why, SRC_JETSON));
        }
        if let Some(l) = m.l4t() {
            if let gpukb_jetson::tables::L4tLookup::Unknown {
                inferred_jetpack_major,
                ..
            } = gpukb_jetson::tables::lookup_l4t(l)
            {
                let newer_than_table = l4t_newer_than_data(l);
                let text = if newer_than_table {
                    format!("L4T {l} is newer than my JetPack table (as of {}); JetPack {} inferred from R{}", builds::jetson_wheels().last().map_or("", |w| &w.as_of), inferred_jetpack_major.map_or("?".into(), |j| j.to_string()), l.major)
                } else {
                    format!("L4T {l} is not in my JetPack table")
                };
                out.push(reason(
                    if newer_than_table {
                        Code::NewerThanData
                    } else {
                        Code::Unknown
                    },
                    None,
                    text,
                    SRC_JETSON,
                ));
            }
        }
        if let Some(why) = &m.gpus_unknown {
            out.push(reason(
                Code::Unknown,
                None,
                format!("{}: GPUs unknown ({why})", m.label),
                "machine facts",
            ));
        }
    }
    let newest = builds::torch_wheels().iter().map(|w| &w.release).max();
    if let (Some(f), Some(n)) = (spec.floor(), newest) {
        if f.parts > n.parts {
            out.push(reason(
                Code::NewerThanData,
                None,
                format!(
                    "torch {} is newer than my tables (newest {n}, as of {})",
                    spec.text,
                    builds::torch_wheels().last().map_or("", |w| &w.as_of)
                ),
                "agent/facts/data/torch_builds.csv",
            ));
        }
    }
    out
}

/// Definite failures first (driver, arch, Python, platform, JetPack), then
/// what is unknown or newer than the data, then the rest, each group in its
/// order: a candidate's first failing reason is its decisive one (a certain
/// driver failure before "targets not verified", newcomer #12).
fn sort_reasons(reasons: &mut [Reason]) {
    reasons.sort_by_key(|r| match r.code {
        Code::Driver | Code::Arch | Code::Python | Code::Platform | Code::Jetpack => 0,
        Code::NewerThanData | Code::Unknown => 1,
        Code::Ok | Code::PtxJit | Code::ForwardCompat => 2,
    });
}

/// The NGC images carry a CUDA build of torch: where no CUDA build of torch
/// runs on the machine for a reason that holds inside a container too (its
/// GPU, driver or platform; not the host's Python), no image runs either
/// (newcomer #11).
fn consistent_containers(
    mut containers: Vec<ContainerVerdict>,
    cands: &[Candidate],
) -> Vec<ContainerVerdict> {
    let cuda: Vec<&Candidate> = cands.iter().filter(|c| c.cuda().is_some()).collect();
    let any_runs = cuda.iter().any(|c| c.runs);
    let python_only = cuda.iter().any(|c| {
        let failing: Vec<Code> = c
            .reasons
            .iter()
            .map(|r| r.code)
            .filter(|k| !matches!(k, Code::Ok | Code::PtxJit | Code::ForwardCompat))
            .collect();
        !failing.is_empty() && failing.iter().all(|k| *k == Code::Python)
    });
    if cuda.is_empty() || any_runs || python_only {
        return containers;
    }
    for c in containers.iter_mut().filter(|c| c.runs) {
        c.runs = false;
        c.reasons.insert(
            0,
            reason(
                Code::Unknown,
                None,
                "no CUDA build of torch runs on this machine (GPU, driver or platform), so the image's build does not either",
                "the plan's candidates",
            ),
        );
    }
    containers
}

/// Plans for `machines` (at least one) within `spec`.
pub fn plan(machines: &[PlannerFacts], spec: &TorchSpec) -> Plan {
    let several = machines.len() > 1;
    let mut cands = candidates(machines, spec);
    for c in &mut cands {
        sort_reasons(&mut c.reasons);
    }
    let picked = pick(&cands, machines).cloned();
    let recommended = picked.as_ref().map(|c| recommend(c, machines));
    let mut as_of: Vec<&str> = cands.iter().map(|c| c.as_of.as_str()).collect();
    as_of.extend([compat::DRIVER_TABLE_AS_OF, crate::gpus::GPUS_AS_OF]);
    let as_of = as_of
        .into_iter()
        .filter(|s| !s.is_empty())
        .min()
        .unwrap_or(compat::DRIVER_TABLE_AS_OF)
        .to_string();
    let views: Vec<MachineView> = machines.iter().map(|m| view(m, several)).collect();
    let merged = if several {
        let mut v = views[0].clone();
        v.label = format!("{} machines", machines.len());
        v.gpus = views.iter().flat_map(|m| m.gpus.clone()).collect();
        v
    } else {
        views[0].clone()
    };
    Plan {
        schema_version: SCHEMA_VERSION,
        as_of,
        machine: merged,
        machines: if several { views } else { Vec::new() },
        notes: notes(machines, spec),
        driver: plan_driver(machines, picked.as_ref()),
        toolkit: plan_toolkit(machines, picked.as_ref()),
        containers: consistent_containers(
            builds::containers()
                .iter()
                .map(|c| judge_container(c, machines))
                .collect(),
            &cands,
        ),
        torch: TorchPlan {
            recommended,
            candidates: cands,
        },
    }
}

/// How a build covers one GPU family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// Machine code for the family.
    Sass,
    /// Runs by JIT-compiling the build's PTX.
    PtxJit,
    /// Does not run.
    No,
}

/// One row of a build's support table.
#[derive(Debug, Clone, Serialize)]
pub struct SupportRow {
    /// The architecture (`Hopper`).
    pub family: String,
    /// The compute capability.
    pub cc: ComputeCapability,
    /// How the build covers it.
    pub support: Support,
    /// The least driver release it runs with there; `None` when it does not run.
    pub min_driver: Option<String>,
    /// Up to three GPUs of that CC, by name.
    pub examples: Vec<String>,
}

/// The build a `--torch` spec names for a support table: the exact build,
/// else the PyPI default (then the newest CUDA) of the newest matching release.
pub fn build_for_spec(spec: &TorchSpec, arch: Arch) -> Option<&'static TorchWheel> {
    let m: Vec<&TorchWheel> = builds::torch_wheels()
        .iter()
        .filter(|w| w.arch == arch && w.cuda.is_some() && spec.matches(&w.release, &w.variant))
        .collect();
    let newest = m.iter().map(|w| &w.release).max()?.clone();
    m.into_iter()
        .filter(|w| w.release == newest)
        .max_by_key(|w| (w.pypi_default, w.cuda))
}

/// Which GPU families a build runs on: `sass`, `ptx_jit` (with the driver its
/// PTX needs) or `no`. `None` when the build's targets are not verified.
pub fn support_table(w: &TorchWheel) -> Option<Vec<SupportRow>> {
    let images = w.images()?;
    let cuda = w.cuda?;
    let mut rows: Vec<SupportRow> = Vec::new();
    for g in crate::gpus::gpu_table() {
        if let Some(r) = rows
            .iter_mut()
            .find(|r| r.cc == g.cc && r.family == g.architecture)
        {
            if r.examples.len() < 3 {
                r.examples.push(g.name.clone());
            }
            continue;
        }
        let v = compat::decide(g.cc.pair(), 99_000, &images);
        let floor = |d: Option<&'static str>| {
            let gpu_min = compat::min_branch_for_gpu(g.cc.pair());
            let f = d?.to_string();
            if f.split('.').next()?.parse::<u32>().ok()? < gpu_min {
                compat::first_release_of_branch(gpu_min).map(str::to_string)
            } else {
                Some(f)
            }
        };
        let (support, min_driver) = match v.outcome {
            ImageOutcome::Sass => (Support::Sass, floor(compat::min_driver_for(cuda))),
            ImageOutcome::PtxJit => (Support::PtxJit, floor(compat::toolkit_driver(cuda))),
            _ => (Support::No, None),
        };
        rows.push(SupportRow {
            family: g.architecture.clone(),
            cc: g.cc,
            support,
            min_driver,
            examples: vec![g.name.clone()],
        });
    }
    rows.sort_by_key(|r| r.cc);
    Some(rows)
}

/// `Targets` as text.
pub fn targets_text(t: &Targets) -> String {
    match t {
        Targets::Known(v) if v.is_empty() => "none".into(),
        Targets::Known(v) => v.join(" "),
        Targets::Unknown => "not verified".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Release {
        Release::parse(s).unwrap()
    }

    #[test]
    fn torch_specs_parse_and_match() {
        let s = TorchSpec::parse("2.5.1+cu124").unwrap();
        assert!(s.matches(&r("2.5.1"), "cu124"));
        assert!(!s.matches(&r("2.5.1"), "cu121"));
        assert!(!s.matches(&r("2.5.0"), "cu124"));
        let s = TorchSpec::parse(">=2.4,<2.6").unwrap();
        assert!(s.matches(&r("2.4.0"), "cpu") && s.matches(&r("2.5.1"), "cu124"));
        assert!(!s.matches(&r("2.6.0"), "cu124") && !s.matches(&r("2.3.1"), "cu121"));
        let s = TorchSpec::parse("2.5").unwrap();
        assert!(s.matches(&r("2.5.0"), "cpu") && s.matches(&r("2.5.1"), "cpu"));
        assert!(
            !s.matches(&r("2.10.0"), "cpu"),
            "2.5 is not a string prefix of 2.10"
        );
        assert!(TorchSpec::parse("").unwrap().matches(&r("1.8.0"), "cu102"));
        assert!(TorchSpec::parse("two").is_err());
        assert!(TorchSpec::parse(">=2.4+cu124").is_err());
        assert!(TorchSpec::parse("2.5.1+cu1;24").is_err());
    }

    #[test]
    fn a_described_h200_on_r580_gets_the_newest_build() {
        // H200 = CC 9.0 (NVIDIA compute-capability page); 2.15.0+cu132 wheel read:
        // sm_75…sm_120; R580 runs 13.x under minor-version compatibility (RN Table 2).
        let m = PlannerFacts {
            label: "described".into(),
            gpus: vec![GpuFact {
                name: "H200".into(),
                cc: ComputeCapability::new(9, 0),
                class: GpuClass::Datacenter,
                in_table: true,
                source: "test".into(),
            }],
            gpus_unknown: None,
            driver: DriverFact::Known {
                version: "580.95.05".parse().unwrap(),
                note: None,
            },
            driver_cuda: None,
            arch: Some(Arch::X86_64),
            python: Some((3, 12)),
            jetson: None,
        };
        let p = plan(&[m], &TorchSpec::default());
        let rec = p.torch.recommended.as_ref().unwrap();
        assert_eq!(
            (rec.version.as_str(), rec.variant.as_str(), rec.via),
            ("2.15.0", "cu132", Via::Sass)
        );
        assert_eq!(p.machine.driver_cuda.as_deref(), Some("13.0"));
        assert_eq!(p.exit_code(), 0);
    }

    #[test]
    fn a_b200_below_the_release_nvidia_names_is_refused() {
        // kb-audit doubt 1: `--gpu B200 --driver 570` (570.26) was approved; the
        // GPU Operator names 570.133.20 for HGX B200, the open-gpu-kernel-modules
        // README lists B300 from 580.82.07.
        let m = |gpu: &str, cc: (u32, u32), driver: &str| PlannerFacts {
            label: "described".into(),
            gpus: vec![GpuFact {
                name: gpu.into(),
                cc: ComputeCapability::new(cc.0, cc.1),
                class: GpuClass::Datacenter,
                in_table: true,
                source: "test".into(),
            }],
            gpus_unknown: None,
            driver: DriverFact::Known {
                version: driver.parse().unwrap(),
                note: None,
            },
            driver_cuda: None,
            arch: Some(Arch::X86_64),
            python: Some((3, 12)),
            jetson: None,
        };
        let p = plan(&[m("B200", (10, 0), "570.26")], &TorchSpec::default());
        assert!(p.torch.recommended.is_none());
        assert!(
            p.driver.reason.contains("needs 570.133.20 or later"),
            "{}",
            p.driver.reason
        );
        assert!(
            !p.driver.reason.contains("already does"),
            "{}",
            p.driver.reason
        );
        let p = plan(&[m("B200", (10, 0), "570.133.20")], &TorchSpec::default());
        assert!(p.torch.recommended.is_some());
        let p = plan(&[m("B300", (10, 3), "580.65.06")], &TorchSpec::default());
        assert!(p.torch.recommended.is_none());
        assert!(p.containers.iter().all(|c| !c.runs));
        let p = plan(&[m("B300", (10, 3), "580.95.05")], &TorchSpec::default());
        assert!(p.torch.recommended.is_some());
    }
}
