//! `gpukb plan`: what to install on a machine and why every other build
//! would fail. Reads the machine(s) (this one, `--replay`, `--root`,
//! `--fingerprint`, repeatable) or a described one (`--gpu`, `--driver`,
//! `--arch`, `--python`, `--jetpack`/`--l4t`; flags override what was
//! observed), hands the facts to `gpukb_facts::plan`, and renders the plan as
//! text or JSON (schema_version 1). Exit 0 when a build is recommended, 1
//! when none runs, 2 on bad input.

use crate::machine::MachineArgs;
use crate::style::Style;
use gpukb_agent::fingerprint::Fingerprint;
use gpukb_facts::builds::Arch;
use gpukb_facts::described::Described;
use gpukb_facts::plan::{
    self, Candidate, Code, DriverFact, Plan, PlannerFacts, Support, TorchSpec, Via,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(
    long_about = "Which PyTorch builds run on this machine (or on captured or described ones), the exact install command for the best one, and for every other build the reason it would fail, each with its source.\n\nExamples:\n  gpukb plan                                   this machine\n  gpukb plan --replay DIR --replay DIR2        a fleet: one build for every machine\n  gpukb plan --gpu \"RTX 4060 Ti\" --driver 535   a described machine\n  gpukb plan --gpu 7.0 --gpu 9.0 --python 3.12  two GPUs in one box\n  gpukb plan --gpu \"Jetson Orin NX\" --jetpack 6.2\n  gpukb plan --driver 580                      what if I install driver 580?\n  gpukb plan --torch 2.5.1+cu124 --support-table",
    after_help = "Policy: the newest torch whose build runs natively (SASS) on every GPU; among its variants the newest CUDA the driver runs without forward compatibility (ties: the PyPI default); else the newest that runs through PTX JIT, marked so.\nExit status: 0 a build is recommended, 1 no CUDA build runs, 2 bad input."
)]
pub struct PlanArgs {
    /// Plan for a copied root filesystem (files only).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["replay", "fingerprint"])]
    pub root: Option<PathBuf>,
    /// Plan for a capture written by `gpukb capture` (repeatable: the plan must run on every machine).
    #[arg(long, value_name = "DIR")]
    pub replay: Vec<PathBuf>,
    /// Plan for a fingerprint written by `gpukb fingerprint --json` (repeatable).
    #[arg(long, value_name = "FILE")]
    pub fingerprint: Vec<PathBuf>,
    /// A GPU by product name ("RTX 4060 Ti"), compute capability (8.9) or PCI id (10de:2684); repeatable. Replaces the observed GPUs.
    #[arg(long, value_name = "NAME|CC|PCI-ID")]
    pub gpu: Vec<String>,
    /// The driver: a release (535.129.03) or a bare branch (535: its first release in the tables).
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// CPU architecture: x86_64 or aarch64.
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// Python version, e.g. 3.12.
    #[arg(long, value_name = "X.Y")]
    pub python: Option<String>,
    /// JetPack release (Jetson), e.g. 6.2.
    #[arg(long, value_name = "X.Y", conflicts_with = "l4t")]
    pub jetpack: Option<String>,
    /// Jetson Linux (L4T) release, e.g. 36.4.3.
    #[arg(long, value_name = "X.Y.Z")]
    pub l4t: Option<String>,
    /// Builds to consider: a version (2.5.1), a build (2.5.1+cu124) or a range (">=2.4,<2.6").
    #[arg(long, value_name = "SPEC", default_value = "")]
    pub torch: String,
    /// Text: list every candidate with all its reasons (JSON always has them all).
    #[arg(long)]
    pub all: bool,
    /// Print which GPU families the build `--torch` names runs on (sass, ptx_jit, no).
    #[arg(long)]
    pub support_table: bool,
    /// Print JSON (schema_version 1).
    #[arg(long)]
    pub json: bool,
    /// On this machine's GPU, load the probe image matching what the recommended build would run (its SASS arch or PTX) and report the CUresult; exit 1 if it fails.
    #[arg(long)]
    pub verify: bool,
    /// Seconds a command such as nvidia-smi may run before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub timeout: f64,
}

pub fn run(args: &PlanArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let spec = TorchSpec::parse(&args.torch)?;
    if args.support_table {
        return support_table(args, &spec, out);
    }
    let machines = machines(args)?;
    let plan = plan::plan(&machines, &spec);
    let verified = if args.verify {
        Some(verify(&machines, &plan)?)
    } else {
        None
    };
    if args.json {
        let output = PlanOutput {
            plan: &plan,
            verify: verified.as_deref(),
        };
        serde_json::to_writer_pretty(&mut *out, &output)?;
        writeln!(out)?;
    } else {
        render(&plan, args.all, &Style::detect(), out)?;
        if let Some(rows) = &verified {
            writeln!(out, "\nverify (probe images loaded on this GPU):")?;
            for r in rows {
                writeln!(out, "  {}", r.text)?;
            }
        }
    }
    let failed = verified
        .iter()
        .flatten()
        .any(|r| r.code.is_some_and(|c| c != 0));
    Ok(ExitCode::from(if failed { 1 } else { plan.exit_code() }))
}

/// `gpukb plan --json`: the plan, and with `--verify` what was loaded on the GPU
/// (schema `plan`, cli/schemas/).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct PlanOutput<'a> {
    #[serde(flatten)]
    pub plan: &'a Plan,
    /// `--verify` only: the probe image loaded on each GPU in place of the build's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<&'a [VerifyRow]>,
}

/// One image `--verify` loaded on a GPU.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct VerifyRow {
    pub gpu: usize,
    pub name: String,
    /// The image the build would run there (`sm_90`, `compute_120`).
    pub build_image: Option<String>,
    /// The probe image loaded in its place (`gpukb_probe.sm_90.cubin`).
    pub probe_image: Option<String>,
    pub code: Option<u32>,
    pub code_name: Option<String>,
    pub predicted: Option<u32>,
    pub text: String,
}

/// `--verify`: loads, on each GPU, the `gpukb-kernels` image matching what
/// the recommended build would run there (its SASS arch, or PTX at a
/// compatible ISA) and reports the `CUresult`, so a 209 or 222 shows up
/// before anything is installed. Needs this machine's GPU.
fn verify(machines: &[PlannerFacts], plan: &Plan) -> anyhow::Result<Vec<VerifyRow>> {
    let live = machines.len() == 1 && machines[0].label == "this machine";
    anyhow::ensure!(live, "--verify loads kernel images on a GPU: it needs this machine, not a capture or a described one");
    anyhow::ensure!(
        !machines[0].gpus.is_empty() && matches!(machines[0].driver, DriverFact::Known { .. }),
        "--verify needs a GPU with a working NVIDIA driver, and this machine has none"
    );
    let r =
        plan.torch.recommended.as_ref().ok_or_else(|| {
            anyhow::anyhow!("--verify: no build is recommended, nothing to verify")
        })?;
    let opts = crate::probe::ProbeArgs {
        quick: true,
        ..Default::default()
    };
    let report = crate::probe::measure(&opts, None)
        .map_err(|e| anyhow::anyhow!("--verify: {}", crate::probe::error_line(&e)))?;
    let build = gpukb_facts::builds::torch_wheels().iter().find(|w| {
        w.release.text == r.version
            && w.variant == r.variant
            && Some(w.arch.as_str()) == machines[0].arch.map(Arch::as_str)
    });
    let images = build.and_then(|b| b.images());
    let mut rows = Vec::new();
    for g in &report.gpus {
        let decided = images
            .as_ref()
            .map(|im| gpukb_facts::compat::decide(g.cc, report.driver_cuda_version, im));
        let want = decided.as_ref().and_then(|v| v.image.clone());
        let pick = want.as_deref().and_then(|t| {
            let base = t.trim_end_matches(['a', 'f']);
            g.module_loads.iter().find(|m| {
                m.target == base
                    && (m.kind == gpukb_kernels::ProbeImageKind::Cubin
                        || m.ptx_isa
                            .is_some_and(|i| i <= report.driver_max_ptx_isa || m.code != 0))
            })
        });
        rows.push(VerifyRow {
            gpu: g.ordinal,
            name: g.name.clone(),
            build_image: want.clone(),
            probe_image: pick.map(|m| m.image.clone()),
            code: pick.map(|m| m.code),
            code_name: pick.map(|m| m.code_name.clone()),
            predicted: pick.map(|m| m.predicted),
            text: match (pick, &want) {
                (Some(m), Some(t)) if m.code == 0 => {
                    format!("{}: {t} loads (CUDA_SUCCESS, {:.1} ms)", g.name, m.ms)
                }
                (Some(m), Some(t)) => format!(
                    "{}: {t} fails to load: {} ({})",
                    g.name, m.code, m.code_name
                ),
                (None, Some(t)) => format!(
                    "{}: gpukb carries no probe image for {t}: not verified",
                    g.name
                ),
                (_, None) => format!(
                    "{}: the build has no image for this GPU: {}",
                    g.name,
                    decided.map_or("targets not verified".into(), |v| v.reason)
                ),
            },
        });
    }
    Ok(rows)
}

fn support_table(
    args: &PlanArgs,
    spec: &TorchSpec,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !spec.text.is_empty(),
        "--support-table needs --torch naming a build, e.g. --torch 2.5.1+cu124"
    );
    let arch = match &args.arch {
        Some(a) => gpukb_facts::described::arch_of(a)?,
        None => Arch::X86_64,
    };
    let w = plan::build_for_spec(spec, arch).ok_or_else(|| {
        anyhow::anyhow!(
            "--torch {}: no CUDA build of that in my tables (linux-{})",
            spec.text,
            arch.as_str()
        )
    })?;
    let rows = plan::support_table(w).ok_or_else(|| {
        anyhow::anyhow!(
            "torch {}+{}: its SASS/PTX targets are not verified in my tables",
            w.release,
            w.variant
        )
    })?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &rows)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = Style::detect();
    writeln!(
        out,
        "{}",
        s.bold(&format!(
            "torch {}+{} (linux-{}): SASS {}; PTX {}",
            w.release,
            w.variant,
            arch.as_str(),
            plan::targets_text(&w.sass),
            plan::targets_text(&w.ptx)
        ))
    )?;
    writeln!(
        out,
        "{}",
        s.dim(&format!("source: {} (as of {})", w.source, w.as_of))
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>5}  {:<8} {:<12} examples",
        "family", "cc", "support", "min driver"
    )?;
    for r in rows {
        let sup = match r.support {
            Support::Sass => s.green("sass"),
            Support::PtxJit => s.yellow("ptx_jit"),
            Support::No => s.red("no"),
        };
        let pad = match r.support {
            Support::Sass => 4,
            Support::PtxJit => 7,
            Support::No => 2,
        };
        writeln!(
            out,
            "{:<22} {:>5}  {}{} {:<12} {}",
            r.family,
            r.cc.to_string(),
            sup,
            " ".repeat(8 - pad),
            r.min_driver.as_deref().unwrap_or("-"),
            s.dim(&r.examples.join(", "))
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the flags say of the machine (`--gpu`, `--driver`, `--arch`,
/// `--python`, `--jetpack`, `--l4t`).
fn described(args: &PlanArgs) -> Described {
    Described {
        gpus: args.gpu.clone(),
        driver: args.driver.clone(),
        arch: args.arch.clone(),
        python: args.python.clone(),
        jetpack: args.jetpack.clone(),
        l4t: args.l4t.clone(),
    }
}

/// The machines the arguments name, with the flags applied: the described
/// one (`--gpu` with no machine input), else each machine observed.
fn machines(args: &PlanArgs) -> anyhow::Result<Vec<PlannerFacts>> {
    let flags = described(args);
    if !args.gpu.is_empty()
        && args.root.is_none()
        && args.replay.is_empty()
        && args.fingerprint.is_empty()
    {
        return Ok(vec![flags.machine()?]);
    }
    let base = |root: Option<PathBuf>, replay: Option<PathBuf>, fingerprint: Option<PathBuf>| {
        MachineArgs {
            root,
            replay,
            fingerprint,
            timeout: args.timeout,
        }
    };
    let mut inputs: Vec<MachineArgs> = Vec::new();
    inputs.extend(
        args.replay
            .iter()
            .map(|r| base(None, Some(r.clone()), None)),
    );
    inputs.extend(
        args.fingerprint
            .iter()
            .map(|f| base(None, None, Some(f.clone()))),
    );
    if inputs.is_empty() {
        inputs.push(base(args.root.clone(), None, None));
    }
    let mut ms: Vec<PlannerFacts> = Vec::new();
    for m in &inputs {
        let fp = observe(m)?;
        ms.push(PlannerFacts::from_fingerprint(&fp, &m.describe()));
    }
    ms.into_iter().map(|m| Ok(flags.apply_to(m)?)).collect()
}

fn observe(m: &MachineArgs) -> anyhow::Result<Fingerprint> {
    if let Some(path) = &m.fingerprint {
        return crate::machine::read_fingerprint(path);
    }
    let host = std::sync::Arc::new(m.host(false)?);
    let mut settings = crate::machine::deadlines(m);
    settings.cuda_init = false;
    Ok(gpukb_agent::fingerprint(host, &settings))
}

fn machine_line(v: &plan::MachineView) -> String {
    let gpus: Vec<String> = v
        .gpus
        .iter()
        .map(|g| format!("{} ({})", g.name, g.cc))
        .collect();
    let mut parts = vec![if gpus.is_empty() {
        "no GPU seen".to_string()
    } else {
        gpus.join(", ")
    }];
    parts.push(match (&v.driver, &v.driver_cuda) {
        (Some(d), Some(c)) => format!("driver {d} (CUDA {c})"),
        (Some(d), None) => format!("driver {d}"),
        (None, Some(c)) => format!("CUDA {c}"),
        _ if v.driver_status == "absent" => "no NVIDIA driver installed".into(),
        _ => "driver unknown".into(),
    });
    if let Some(a) = v.arch {
        parts.push(a.to_string());
    }
    if let Some(p) = &v.python {
        parts.push(format!("Python {p}"));
    }
    if let Some(j) = &v.jetpack {
        parts.push(format!("JetPack {j}"));
    }
    if let Some(l) = &v.l4t {
        parts.push(format!("L4T {l}"));
    }
    parts.join("; ")
}

/// The decisive reason a candidate fails: a definite failure (driver, arch,
/// Python, platform, JetPack) before what is unknown or newer than the data.
fn first_failure(c: &Candidate) -> Option<&plan::Reason> {
    let definite = |r: &&plan::Reason| {
        matches!(
            r.code,
            Code::Driver | Code::Arch | Code::Python | Code::Platform | Code::Jetpack
        )
    };
    c.reasons.iter().find(definite).or_else(|| {
        c.reasons
            .iter()
            .find(|r| !matches!(r.code, Code::Ok | Code::PtxJit | Code::ForwardCompat))
    })
}

fn code_name(c: Code) -> String {
    serde_json::to_value(c)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The text plan.
pub fn render(p: &Plan, all: bool, s: &Style, out: &mut dyn Write) -> std::io::Result<()> {
    render_machines(p, s, out)?;
    writeln!(out)?;
    render_recommendation(p, s, out)?;
    render_platform(p, out)?;
    writeln!(out)?;
    render_candidates(p, all, s, out)?;
    writeln!(out, "{}", s.dim(&format!("tables as of {}", p.as_of)))?;
    Ok(())
}

/// Renders the heading, one line per machine planned for, and the plan's notes.
fn render_machines(p: &Plan, s: &Style, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        s.bold(&format!("gpukb plan: {}", p.machine.label))
    )?;
    if p.machines.is_empty() {
        writeln!(out, "  {}", machine_line(&p.machine))?;
    } else {
        for m in &p.machines {
            writeln!(out, "  {}: {}", m.label, machine_line(m))?;
        }
    }
    for n in &p.notes {
        let mark = match n.code {
            Code::NewerThanData | Code::Unknown => s.yellow("!"),
            _ => s.dim("·"),
        };
        writeln!(out, "  {mark} {}", n.text)?;
    }
    Ok(())
}

/// Renders the recommended torch build with its install commands and why, or that none runs.
fn render_recommendation(p: &Plan, s: &Style, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(r) = &p.torch.recommended else {
        return writeln!(
            out,
            "{} no CUDA build of torch runs on {}",
            s.red("✗"),
            if p.machines.is_empty() {
                "this input"
            } else {
                "every machine"
            }
        );
    };
    let via = match r.via {
        Via::Sass => s.green("runs natively (SASS)"),
        Via::PtxJit => s.yellow("runs only through PTX JIT"),
    };
    let sure = if r.certain {
        String::new()
    } else {
        s.yellow(" (not certain: some facts are unknown)")
    };
    writeln!(
        out,
        "{} torch {}+{}: {via}{sure}",
        s.green("✓ install"),
        r.version,
        r.variant
    )?;
    writeln!(out, "    $ {}", r.command)?;
    for a in &r.alternatives {
        writeln!(
            out,
            "    {} $ {}",
            s.dim(&format!("{}:", a.tool)),
            a.command
        )?;
    }
    writeln!(out, "    {}", s.dim(&format!("why: {}", r.why)))
}

/// Renders the driver branch, the toolkit and the containers that run.
fn render_platform(p: &Plan, out: &mut dyn Write) -> std::io::Result<()> {
    match p.driver.branch {
        Some(b) => writeln!(
            out,
            "  driver:  R{b}{}: {}",
            if p.driver.open_modules_required {
                " (open kernel modules)"
            } else {
                ""
            },
            p.driver.reason
        )?,
        None => writeln!(out, "  driver:  {}", p.driver.reason)?,
    }
    if let Some(t) = &p.toolkit.version {
        writeln!(out, "  toolkit: CUDA {t}: {}", p.toolkit.reason)?;
    }
    let ok: Vec<&str> = p
        .containers
        .iter()
        .filter(|c| c.runs)
        .map(|c| c.image.as_str())
        .collect();
    if !ok.is_empty() {
        writeln!(out, "  containers that run: {}", ok.join(", "))?;
    }
    Ok(())
}

/// Renders the candidate builds, newest first: the four newest releases for
/// this platform, or with `all` every build with every reason.
fn render_candidates(p: &Plan, all: bool, s: &Style, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        s.bold(if all {
            "Every candidate:"
        } else {
            "Candidates (the newest releases; --all lists every one, with every reason):"
        })
    )?;
    // Newest first; without --all, only builds for this platform.
    let mut list: Vec<&Candidate> = p
        .torch
        .candidates
        .iter()
        .filter(|c| all || !c.reasons.iter().any(|r| r.code == Code::Platform))
        .collect();
    list.sort_by(|a, b| {
        gpukb_facts::builds::Release::parse(&b.version)
            .cmp(&gpukb_facts::builds::Release::parse(&a.version))
            .then(b.variant.cmp(&a.variant))
    });
    let mut releases: Vec<&str> = Vec::new();
    for c in &list {
        if !releases.contains(&c.version.as_str()) {
            releases.push(&c.version);
        }
    }
    let shown: Vec<&str> = if all {
        releases.clone()
    } else {
        releases.iter().copied().take(4).collect()
    };
    for c in list.iter().filter(|c| shown.contains(&c.version.as_str())) {
        render_candidate(c, all, s, out)?;
    }
    if !all && releases.len() > shown.len() {
        writeln!(
            out,
            "{}",
            s.dim(&format!(
                "  … {} older releases (--all)",
                releases.len() - shown.len()
            ))
        )?;
    }
    Ok(())
}

/// Renders one candidate: its mark and build, then how it runs or why it fails
/// (with `all`, every reason on a line of its own).
fn render_candidate(
    c: &Candidate,
    all: bool,
    s: &Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mark = if c.runs {
        if c.via == Some(Via::PtxJit) {
            s.yellow("~")
        } else {
            s.green("✓")
        }
    } else {
        s.red("✗")
    };
    let head = format!(
        "{mark} {:<9} {:<8} {:<20} ",
        c.version, c.variant, c.platform
    );
    if all {
        writeln!(
            out,
            "{head}{}",
            if c.certain { "" } else { "(not certain)" }
        )?;
        for r in &c.reasons {
            writeln!(
                out,
                "      {:<15} {} {}",
                code_name(r.code),
                r.text,
                s.dim(&format!("[{}]", r.source))
            )?;
        }
    } else if c.runs {
        let how = match c.via {
            Some(Via::PtxJit) => "runs through PTX JIT",
            _ if c.variant == "cpu" => "runs (CPU only)",
            _ => "runs",
        };
        writeln!(
            out,
            "{head}{}{}",
            s.dim(how),
            if c.certain { "" } else { " (not certain)" }
        )?;
    } else if let Some(r) = first_failure(c) {
        writeln!(out, "{head}{}: {}", code_name(r.code), r.text)?;
    }
    Ok(())
}
