//! `gpukb agent`: gpukb unattended. `--once` takes one stack snapshot,
//! stores it with what changed since the previous one, reads the kernel
//! log, writes the Prometheus textfile, and exits with the doctor's code
//! (or as `--fail-on` says); without `--once` it runs as a daemon with two
//! cadences and, with `--listen`, serves `/metrics`, `/health`, `/healthz`.
//! The engine is `gpukb_monitor`; this module parses flags, prints and picks
//! exit codes.

use crate::history::db_path;
use crate::machine::MachineArgs;
use anyhow::Context;
use gpukb_doctor::Verdict;
use gpukb_monitor::daemon::{Agent, Config, KernelLogSource, Pass};
use gpukb_monitor::diff::verdict_str;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// The rules `--npd` answers for (Node Problem Detector's custom plugins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NpdRule {
    /// The doctor's verdict on the software stack.
    Stack,
    /// The kernel log's Xid/SXid events by the Xid policy.
    Hardware,
}

/// Verdicts `--fail-on` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Failure,
    Warning,
    Unknown,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status (--once): 0 ok or warning, 1 failure, 3 unknown, 2 gpukb could not run; \
the verdict is the node's: the doctor's on the stack with the kernel log's Xid events by the Xid policy \
(a fail-class Xid this boot not acknowledged is a failure). With \
--fail-on LEVEL[,LEVEL]: 1 when the verdict is one of the levels named (warning includes failure), else 0. \
--npd RULE: one line of at most 80 bytes, 0 ok or warning, 1 problem, 2 unknown; no history is written. \
--ack ID: 0 acknowledged, 2 no such event. \
History: --db, else $STATE_DIRECTORY/agent.db (systemd), /var/lib/gpukb/agent.db as root, $XDG_STATE_HOME/gpukb/agent.db."
)]
pub struct AgentArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Take one snapshot, store it, write the textfile, and exit (for a timer, cron, a Slurm prolog, a probe).
    #[arg(long)]
    pub once: bool,
    /// The history database (SQLite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Write the metrics to this node_exporter textfile (`*.prom`), atomically.
    #[arg(long, value_name = "PATH")]
    pub textfile: Option<PathBuf>,
    /// Serve /metrics, /health and /healthz on PORT (127.0.0.1) or HOST:PORT.
    #[arg(long, value_name = "PORT|HOST:PORT", conflicts_with = "once")]
    pub listen: Option<String>,
    /// Telemetry cadence (daemon).
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub interval: String,
    /// Stack-snapshot cadence (daemon); a watched file's change triggers one at once.
    #[arg(long, value_name = "DUR", default_value = "10m")]
    pub stack_interval: String,
    /// Exit 1 when the verdict is one of these (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LEVEL")]
    pub fail_on: Vec<FailOn>,
    /// Print the --once result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Retention by age: history older than this is removed.
    #[arg(long, value_name = "DUR", default_value = "30d")]
    pub keep: String,
    /// Retention by size: the history's data stay under this many MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub max_db_mib: u64,
    /// Kernel-log source: `system` (/dev/kmsg, else journalctl -k), `off`, or a file of recorded /dev/kmsg lines.
    #[arg(long, value_name = "system|off|FILE", default_value = "system")]
    pub kernel_log: String,
    /// File kernel events under this boot id (default: /proc/sys/kernel/random/boot_id).
    #[arg(long, value_name = "ID", hide = true)]
    pub boot_id: Option<String>,
    /// Every DUR, per GPU: a CUDA context, one small kernel and a host<->device copy, verified
    /// (off by default; skips GPUs in exclusive or prohibited compute mode, in MIG mode or with
    /// compute processes running). With --once: once.
    #[arg(long, value_name = "DUR")]
    pub canary: Option<String>,
    /// Run the canary on CUDA device 0 and report on stdout (what `--canary` starts per GPU).
    #[arg(long, hide = true)]
    pub canary_child: bool,
    /// With --once: also print, on stderr, how long each step took and the memory held after it.
    #[arg(long, requires = "once")]
    pub timings: bool,
    /// With --once: answer as a Node Problem Detector custom plugin for one rule (one line
    /// of at most 80 characters; exit 0 ok or warning, 1 problem, 2 unknown); opens no history.
    #[arg(long, value_enum, value_name = "stack|hardware", requires = "once")]
    pub npd: Option<NpdRule>,
    /// Acknowledge event ID of the history (`gpukb history` lists the ids): a kernel event
    /// acknowledged no longer counts in the verdict.
    #[arg(long, value_name = "EVENT_ID", conflicts_with_all = ["once", "listen", "npd"])]
    pub ack: Option<i64>,
    /// With --ack: why (kept in the history).
    #[arg(long, value_name = "TEXT", requires = "ack")]
    pub note: Option<String>,
}

fn config(args: &AgentArgs) -> anyhow::Result<Config> {
    let dur = |flag: &str, v: &str| {
        gpukb_monitor::duration::parse(v).with_context(|| format!("--{flag}"))
    };
    let kernel_log = match args.kernel_log.as_str() {
        "system"
            if args.machine.replay.is_some()
                || args.machine.fingerprint.is_some()
                || args.machine.root.is_some() =>
        {
            KernelLogSource::Off
        }
        "system" => KernelLogSource::System,
        "off" => KernelLogSource::Off,
        f => KernelLogSource::File(PathBuf::from(f)),
    };
    if let Some(t) = &args.textfile {
        anyhow::ensure!(
            gpukb_monitor::daemon::textfile_name_ok(t),
            "--textfile {}: node_exporter reads only files named *.prom",
            t.display()
        );
    }
    anyhow::ensure!(args.max_db_mib >= 1, "--max-db-mib must be at least 1");
    // The stack snapshot takes the cheap facts (gpukb_monitor::snapshot::observe):
    // no cuInit, and libcuda is loaded only when NVML cannot give the driver's
    // CUDA version; the checks that need cuInit stay unknown (the output says so).
    let mut settings = crate::machine::deadlines(&args.machine);
    settings.cuda_init = false;
    let settings_cuda = settings.cuda;
    Ok(Config {
        db: db_path(&args.db)?,
        textfile: args.textfile.clone(),
        keep: dur("keep", &args.keep)?,
        max_db_bytes: args.max_db_mib << 20,
        kernel_log,
        boot_id: args.boot_id.clone(),
        input: args.machine.describe(),
        settings,
        interval: dur("interval", &args.interval)?,
        stack_interval: dur("stack-interval", &args.stack_interval)?,
        nvml_deadline: std::time::Duration::from_secs_f64(args.machine.timeout.clamp(0.1, 600.0)),
        canary: canary_config(args, &settings_cuda)?,
    })
}

/// `--canary DUR`: the cadence and the child process that runs it (this
/// binary, `agent --canary-child`), each CUDA call held to the CUDA deadline.
#[allow(clippy::disallowed_methods)] // our own executable's path
fn canary_config(
    args: &AgentArgs,
    cuda_deadline: &std::time::Duration,
) -> anyhow::Result<Option<gpukb_monitor::daemon::CanaryConfig>> {
    let Some(every) = &args.canary else {
        return Ok(None);
    };
    let every = gpukb_monitor::duration::parse(every).context("--canary")?;
    anyhow::ensure!(
        every >= std::time::Duration::from_secs(10),
        "--canary {}: at least 10s (each run creates a CUDA context on every idle GPU)",
        args.canary.as_deref().unwrap_or_default()
    );
    anyhow::ensure!(
        args.machine.replay.is_none() && args.machine.root.is_none() && args.machine.fingerprint.is_none(),
        "--canary runs kernels on this machine's GPUs: it cannot be combined with --replay, --root or --fingerprint"
    );
    let program =
        std::env::current_exe().context("--canary: cannot find gpukb's own executable")?;
    Ok(Some(gpukb_monitor::daemon::CanaryConfig {
        every,
        launcher: gpukb_monitor::canary::ChildLauncher {
            program,
            args: vec!["agent".into(), "--canary-child".into()],
            step_deadline: *cuda_deadline,
        },
    }))
}

/// `gpukb agent --canary-child`: the canary on CUDA device 0 (the parent
/// names the GPU in `CUDA_VISIBLE_DEVICES`), each CUDA call announced on
/// stdout before it is made, then one result line.
fn canary_child(out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    use gpukb_monitor::canary::{child_result_line, ChildReport};
    // cudarc reports a missing library by panicking; the probe's guard catches it.
    std::panic::set_hook(Box::new(|_| {}));
    let mut step = |s: &str| {
        let _ = writeln!(out, "step {s}");
        let _ = out.flush();
    };
    let report = match gpukb_agent::probe::canary::run(0, &mut step) {
        Ok(run) => ChildReport::Ran(run),
        Err(error) => ChildReport::Error { error },
    };
    writeln!(out, "{}", child_result_line(&report))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The exit code for `verdict` under `fail_on` (empty: the doctor's codes).
pub fn exit_code(verdict: Verdict, fail_on: &[FailOn]) -> u8 {
    if fail_on.is_empty() {
        return match verdict {
            Verdict::Ok | Verdict::Warning => 0,
            Verdict::Failure => 1,
            Verdict::Unknown => 3,
        };
    }
    let hit = fail_on.iter().any(|f| match f {
        FailOn::Failure => verdict == Verdict::Failure,
        FailOn::Warning => matches!(verdict, Verdict::Warning | Verdict::Failure),
        FailOn::Unknown => verdict == Verdict::Unknown,
    });
    u8::from(hit)
}

/// Where the agent caches ELF summaries: `$CACHE_DIRECTORY` (systemd), else
/// next to the history.
#[allow(clippy::disallowed_methods)] // gpukb's own settings, not facts about the machine
fn elf_cache(db: &std::path::Path) -> Option<PathBuf> {
    gpukb_monitor::paths::elf_cache_dir(&|k| std::env::var(k).ok(), db)
}

/// What `--once` asked NVML before anything else.
struct NvmlFirst {
    telemetry: gpukb_monitor::telemetry::Telemetry,
    nvml: gpukb_facts::Observed<gpukb_facts::fingerprint::NvmlFacts>,
}

/// NVML first, then let go of it. `nvmlInit` alone allocates about 13.5 MB and
/// maps libnvidia-ml and libcuda (19 MB on an H200): `--once` asks NVML once, for
/// the telemetry sample and the fingerprint's section together, and shuts it
/// down (the library unloaded) before it opens the history and the KB, reads the
/// files and judges them, so that NVML's memory and gpukb's are never held at
/// once. (With `--canary` NVML stays open: the canary asks it which GPUs it may
/// use.) A driver whose `nvmlInit` missed its deadline is not asked again.
fn ask_nvml_first(cfg: &Config, host: &Arc<gpukb_agent::host::Host>) -> NvmlFirst {
    let mut sampler = gpukb_monitor::telemetry::NvmlSampler::open(cfg.nvml_deadline);
    let telemetry = sampler.sample();
    let nvml = match sampler.init_did_not_answer() {
        Some(why) => gpukb_facts::Observed::failed(
            gpukb_facts::fingerprint::Source::Nvml {
                call: "nvmlInit_v2".into(),
            },
            why,
        ),
        None => gpukb_agent::nvml_section(host.clone(), &cfg.settings),
    };
    drop(sampler);
    NvmlFirst { telemetry, nvml }
}

/// `--once`'s judged snapshot (of `--fingerprint FILE`, or observed now with
/// what NVML said first), and the telemetry sample taken with NVML's answer.
fn once_snapshot(
    args: &AgentArgs,
    agent: &Agent,
    early: Option<NvmlFirst>,
    steps: &mut crate::steps::Steps,
) -> anyhow::Result<(
    gpukb_monitor::snapshot::Snapshot,
    Option<gpukb_monitor::telemetry::Telemetry>,
)> {
    if let Some(path) = &args.machine.fingerprint {
        let fp = crate::machine::read_fingerprint(path)?;
        steps.done("read the fingerprint");
        let snap = gpukb_monitor::snapshot::judge(
            fp,
            &args.machine.describe(),
            Some(&agent.kb),
            gpukb_monitor::time::now(),
        );
        return Ok((snap, None));
    }
    let (fp, sample) = match early {
        Some(NvmlFirst { telemetry, nvml }) => (
            gpukb_monitor::snapshot::observe_with_nvml(
                agent.host.clone(),
                &agent.cfg.settings,
                nvml,
            ),
            Some(telemetry),
        ),
        None => (
            gpukb_monitor::snapshot::observe(agent.host.clone(), &agent.cfg.settings),
            None,
        ),
    };
    steps.done("fingerprint (no cuInit)");
    let snap = gpukb_monitor::snapshot::judge(
        fp,
        &agent.cfg.input,
        Some(&agent.kb),
        gpukb_monitor::time::now(),
    );
    Ok((snap, sample))
}

pub fn run(args: &AgentArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.canary_child {
        return canary_child(out);
    }
    if let Some(id) = args.ack {
        return ack(args, id, out);
    }
    if let Some(rule) = args.npd {
        return npd(args, rule, out);
    }
    let mut steps = crate::steps::Steps::new(args.timings);
    let cfg = config(args)?;
    let host = match &args.machine.fingerprint {
        Some(_) => Arc::new(gpukb_agent::host::Host::root_dir(
            "/nonexistent-fingerprint-input",
        )),
        None => Arc::new(args.machine.host_caching_in(false, elf_cache(&cfg.db))?),
    };
    let nvml_first = args.once
        && args.machine.fingerprint.is_none()
        && cfg.canary.is_none()
        && matches!(host.mode(), gpukb_agent::host::Mode::Live);
    let early = nvml_first.then(|| ask_nvml_first(&cfg, &host));
    if early.is_some() {
        steps.done("NVML: facts and sample");
    }
    let mut agent = Agent::open(cfg, host)?;
    steps.done("open history and KB");
    if !args.once {
        return daemon(args, &mut agent, out);
    }
    let mut sampler = match &early {
        Some(_) => gpukb_monitor::telemetry::NvmlSampler::unavailable(
            "NVML was shut down after this snapshot's sample",
        ),
        None => {
            // NVML's initialisation is reference-counted: opened here, the stack
            // snapshot's own nvmlInit/nvmlShutdown cost next to nothing and the
            // telemetry sample reuses the same session.
            let s = agent.sampler();
            steps.done("open NVML");
            s
        }
    };
    let (snap, early_sample) = once_snapshot(args, &agent, early, &mut steps)?;
    steps.done("diagnose");
    let pass = agent.record(snap)?;
    let (node, hardware) = agent.node_verdict(&pass.snapshot)?;
    steps.done("store, compare, kernel log");
    let telemetry = match early_sample {
        Some(t) => agent.with_platform(t, Some(&pass.snapshot)),
        None => agent.sample(&mut sampler, Some(&pass.snapshot)),
    };
    let canary = agent.canary_pass(&mut sampler, Some(&pass.snapshot))?;
    let text = agent.exposition(
        Some(&pass.snapshot),
        Some(&telemetry),
        pass.kernel_log.clone(),
        canary.as_ref(),
    )?;
    steps.done("sample telemetry, metrics");
    agent.write_textfile(&text)?;
    if args.json {
        let mut o = once_output(&agent, &pass, node, &hardware)?;
        if let Some(c) = &canary {
            o.canary = Some(match c {
                Ok(results) => serde_json::to_value(results)?,
                Err(why) => serde_json::json!({ "unavailable": why }),
            });
        }
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        render_once(&agent, &pass, node, &hardware, out)?;
        if let Some(c) = &canary {
            render_canary(c, out)?;
        }
    }
    steps.done("write textfile and answer");
    steps.total();
    Ok(ExitCode::from(exit_code(node, &args.fail_on)))
}

/// `gpukb agent --ack ID [--note TEXT]`.
fn ack(args: &AgentArgs, id: i64, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let path = db_path(&args.db)?;
    let mut store = gpukb_monitor::store::Store::open_existing(&path)?;
    if !store.ack(id, args.note.as_deref(), gpukb_monitor::time::now())? {
        anyhow::bail!(
            "no event {id} in {} (gpukb history lists the events and their ids)",
            path.display()
        );
    }
    let e = store
        .event(id)?
        .ok_or_else(|| anyhow::anyhow!("event {id} vanished from {}", path.display()))?;
    writeln!(
        out,
        "gpukb agent: event {id} acknowledged ({} {}{})",
        e.kind,
        e.what,
        args.note
            .as_deref()
            .map(|n| format!(": {n}"))
            .unwrap_or_default()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `s` cut to at most `max` characters (NPD keeps only the first 80 bytes of
/// stdout by default: the line stays ASCII-safe by cutting on characters and
/// counting bytes).
pub fn clip(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    for c in one.chars() {
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    out
}

/// `--once --npd RULE`: Node Problem Detector's custom-plugin protocol (exit 0
/// OK, 1 NonOK, other Unknown; stdout cut at `max_output_length`, 80 by
/// default). Opens no history: NPD runs its rules concurrently, and a lock
/// wait could outlast the plugin's timeout.
fn npd(args: &AgentArgs, rule: NpdRule, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (code, line) = match npd_verdict(args, rule) {
        Ok(v) => v,
        Err(e) => (
            2,
            format!("unknown: {}", e.to_string().lines().next().unwrap_or("")),
        ),
    };
    writeln!(out, "{}", clip(&line, 80))?;
    Ok(ExitCode::from(code))
}

fn npd_verdict(args: &AgentArgs, rule: NpdRule) -> anyhow::Result<(u8, String)> {
    let offline = args.machine.replay.is_some()
        || args.machine.fingerprint.is_some()
        || args.machine.root.is_some();
    let host = match &args.machine.fingerprint {
        Some(_) => gpukb_agent::host::Host::root_dir("/nonexistent-fingerprint-input"),
        None => args.machine.host_caching_in(false, None)?,
    };
    match rule {
        NpdRule::Hardware => {
            let source = match args.kernel_log.as_str() {
                "system" if offline => KernelLogSource::Off,
                "system" => KernelLogSource::System,
                "off" => KernelLogSource::Off,
                f => KernelLogSource::File(PathBuf::from(f)),
            };
            if source == KernelLogSource::Off {
                return Ok((
                    2,
                    "unknown: the kernel log is not read (--kernel-log off, or a recording)".into(),
                ));
            }
            let records = gpukb_monitor::daemon::read_records(&source, &host)?;
            let hw = gpukb_monitor::daemon::hardware_of_records(&records);
            let first = hw.reasons.first().map(|r| r.text.clone());
            Ok(match hw.level {
                gpukb_monitor::xid_policy::Level::Failure => {
                    (1, first.unwrap_or_else(|| "hardware fault".into()))
                }
                gpukb_monitor::xid_policy::Level::Warning => {
                    (0, format!("warning: {}", first.unwrap_or_default()))
                }
                gpukb_monitor::xid_policy::Level::Ok => {
                    (0, "ok: no fail-class Xid in the kernel log".into())
                }
            })
        }
        NpdRule::Stack => {
            let kb = gpukb_kb::Kb::open().context("knowledge base")?;
            let fp = match &args.machine.fingerprint {
                Some(path) => crate::machine::read_fingerprint(path)?,
                None => {
                    let mut settings = crate::machine::deadlines(&args.machine);
                    settings.cuda_init = false;
                    gpukb_monitor::snapshot::observe(Arc::new(host), &settings)
                }
            };
            let snap = gpukb_monitor::snapshot::judge(
                fp,
                &args.machine.describe(),
                Some(&kb),
                gpukb_monitor::time::now(),
            );
            let d = &snap.diagnosis;
            Ok(match d.verdict {
                Verdict::Failure => (1, d.summary.clone()),
                Verdict::Unknown => (2, format!("unknown: {}", d.summary)),
                Verdict::Warning => (0, format!("warning: {}", d.summary)),
                Verdict::Ok => (0, format!("ok: {}", d.summary)),
            })
        }
    }
}

/// The checks the diagnosis left undecided because the snapshot did not call
/// `cuInit` (the agent never does; `gpukb doctor` does).
pub fn needs_cuinit(d: &gpukb_doctor::Diagnosis) -> Vec<String> {
    d.undecided
        .iter()
        .filter(|u| u.reason.contains("cuInit") || u.reason.contains("CUDA driver API"))
        .map(|u| u.check.to_string())
        .collect()
}

/// `gpukb agent --once --json` (schema `agent-once`, cli/schemas/).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OnceOutput {
    pub snapshot: OnceSnapshot,
    /// The snapshot compared with (`null` for the first one in the history).
    pub previous: Option<i64>,
    /// What changed since `previous`.
    pub changes: Vec<gpukb_monitor::diff::Change>,
    /// Kernel-log events not seen before.
    pub kernel_events: Vec<OnceKernelEvent>,
    /// `read`, or why the kernel log was not read.
    pub kernel_log: String,
    /// The history database.
    pub db: String,
    /// The Prometheus textfile written, if any.
    pub textfile: Option<String>,
    /// Checks left undecided because the snapshot does not call `cuInit`.
    pub unknown_without_cuinit: Vec<String>,
    /// The node's verdict: the snapshot's (the doctor's) with the hardware's.
    pub health: OnceHealth,
    /// With `--canary`: per GPU, the canary's result or why it was skipped (or
    /// `{unavailable: why}`); absent without `--canary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<serde_json::Value>,
}

/// The node's verdict and its two layers.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OnceHealth {
    /// What the exit code and `gpukb_health` say.
    pub verdict: Verdict,
    /// The doctor's verdict on the stack (`snapshot.verdict`).
    pub stack: Verdict,
    /// This boot's kernel-log events not acknowledged, by the Xid policy.
    pub hardware: gpukb_monitor::xid_policy::HardwareVerdict,
}

/// The snapshot this pass stored.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OnceSnapshot {
    pub id: i64,
    /// RFC 3339.
    pub at: String,
    pub verdict: Verdict,
    pub summary: String,
}

/// One kernel-log event (Xid, SXid, fallen off the bus, GSP timeout).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OnceKernelEvent {
    /// `xid`, `sxid`, `fallen_off_bus`, `gsp_timeout`.
    #[schemars(with = "String")]
    pub kind: gpukb_facts::fingerprint::KernelEventKind,
    pub code: Option<u32>,
    /// PCI address as the driver printed it, or `unknown`.
    pub gpu: String,
    pub seq: u64,
    /// RFC 3339.
    pub at: String,
    pub message: String,
    /// Its id in the history (`gpukb agent --ack ID`).
    pub event_id: Option<i64>,
    /// The Xid policy's class: `fail`, `warn`, `application` or `none`.
    pub class: String,
}

fn view(k: &gpukb_monitor::store::KernelRow) -> gpukb_monitor::xid_policy::EventView {
    gpukb_monitor::xid_policy::EventView {
        event_id: None,
        kind: k.kind.to_string(),
        code: k.code,
        gpu: k.gpu.clone(),
        message: k.message.clone(),
    }
}

fn once_output(
    agent: &Agent,
    pass: &Pass,
    node: Verdict,
    hardware: &gpukb_monitor::xid_policy::HardwareVerdict,
) -> anyhow::Result<OnceOutput> {
    let d = &pass.snapshot.diagnosis;
    let mut kernel_events = Vec::new();
    for k in &pass.new_kernel_events {
        kernel_events.push(OnceKernelEvent {
            kind: k.kind,
            code: k.code,
            gpu: k.gpu.clone(),
            seq: k.seq,
            at: gpukb_monitor::time::rfc3339(k.at),
            message: k.message.clone(),
            event_id: agent.store.kernel_event_id(&k.boot_id, k.seq)?,
            class: gpukb_monitor::xid_policy::judge_event(&view(k)).class,
        });
    }
    Ok(OnceOutput {
        snapshot: OnceSnapshot {
            id: pass.snapshot_id,
            at: gpukb_monitor::time::rfc3339(pass.snapshot.at),
            verdict: d.verdict,
            summary: d.summary.clone(),
        },
        previous: pass.previous,
        changes: pass.changes.clone(),
        kernel_events,
        kernel_log: match &pass.kernel_log {
            Ok(()) => "read".to_string(),
            Err(e) => e.clone(),
        },
        db: agent.store.path().display().to_string(),
        textfile: agent.cfg.textfile.as_ref().map(|p| p.display().to_string()),
        unknown_without_cuinit: needs_cuinit(d),
        health: OnceHealth {
            verdict: node,
            stack: d.verdict,
            hardware: hardware.clone(),
        },
        canary: None,
    })
}

fn render_once(
    agent: &Agent,
    pass: &Pass,
    node: Verdict,
    hardware: &gpukb_monitor::xid_policy::HardwareVerdict,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let d = &pass.snapshot.diagnosis;
    writeln!(
        out,
        "gpukb agent: snapshot @{} of {}: {}: {}",
        pass.snapshot_id,
        d.input,
        verdict_str(d.verdict),
        d.summary
    )?;
    match pass.previous {
        None => writeln!(out, "  first snapshot in {}", agent.store.path().display())?,
        Some(p) if pass.changes.is_empty() => writeln!(out, "  no change since @{p}")?,
        Some(p) => {
            writeln!(out, "  changed since @{p}:")?;
            crate::history::render_changes(&pass.changes, out)?;
        }
    }
    for k in &pass.new_kernel_events {
        let code = k.code.map(|c| format!(" {c}")).unwrap_or_default();
        let id = agent
            .store
            .kernel_event_id(&k.boot_id, k.seq)?
            .map(|i| format!(" [event {i}]"))
            .unwrap_or_default();
        writeln!(
            out,
            "  kernel log: {}{code} on {} ({}){id}: {}",
            k.kind,
            k.gpu,
            gpukb_monitor::xid_policy::judge_event(&view(k)).class,
            k.message
        )?;
    }
    if hardware.level != gpukb_monitor::xid_policy::Level::Ok {
        writeln!(
            out,
            "  hardware: {} this boot ({}); the node's verdict: {}",
            verdict_str(gpukb_monitor::xid_policy::level_verdict(hardware.level)),
            hardware
                .reasons
                .iter()
                .map(|r| match r.event_id {
                    Some(i) => format!("{} [event {i}]", r.text),
                    None => r.text.clone(),
                })
                .collect::<Vec<_>>()
                .join("; "),
            verdict_str(node)
        )?;
        writeln!(
            out,
            "  a fail-class event keeps failing until a reboot or `gpukb agent --ack EVENT_ID --note TEXT`"
        )?;
    }
    if let Err(e) = &pass.kernel_log {
        writeln!(out, "  kernel log not read: {e}")?;
    }
    let need_cuinit = needs_cuinit(d);
    if !need_cuinit.is_empty() {
        writeln!(
            out,
            "  {} check(s) need cuInit and stay unknown here ({}); `gpukb doctor` runs them",
            need_cuinit.len(),
            need_cuinit.join(", ")
        )?;
    }
    if let Some(t) = &agent.cfg.textfile {
        writeln!(out, "  metrics written to {}", t.display())?;
    }
    Ok(())
}

fn render_canary(
    c: &gpukb_monitor::daemon::CanaryStatus,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match c {
        Err(why) => writeln!(out, "  canary not run: {why}"),
        Ok(results) => {
            for r in results {
                writeln!(
                    out,
                    "  canary on GPU {} ({}): {}",
                    r.index,
                    r.model,
                    r.outcome.line()
                )?;
            }
            Ok(())
        }
    }
}

struct Stderr;
impl gpukb_monitor::daemon::Log for Stderr {
    fn line(&self, text: &str) {
        eprintln!("gpukb agent: {text}");
    }
}

fn daemon(args: &AgentArgs, agent: &mut Agent, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.machine.fingerprint.is_none(),
        "--fingerprint gives one snapshot: use it with --once"
    );
    let signals = gpukb_monitor::daemon::install_signals()?;
    let shared = Arc::new(Mutex::new(gpukb_monitor::daemon::Shared::default()));
    if let Some(l) = &args.listen {
        let addr = gpukb_monitor::http::parse_listen(l)?;
        let bound = gpukb_monitor::http::serve(addr, shared.clone())?;
        eprintln!("gpukb agent: serving http://{bound}/metrics");
    }
    eprintln!(
        "gpukb agent: history {}; telemetry every {}, stack every {}",
        agent.store.path().display(),
        gpukb_monitor::duration::show(agent.cfg.interval),
        gpukb_monitor::duration::show(agent.cfg.stack_interval)
    );
    agent.run(&signals, &shared, &Stderr)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
