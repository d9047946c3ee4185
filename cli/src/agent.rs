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
use gpukb_monitor::daemon::{Agent, Config, KernelLogSource};
use gpukb_monitor::diff::verdict_str;
use gpukb_monitor::once::{FailLevel, Found};
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
    let kernel_log = KernelLogSource::from_flag(&args.kernel_log, offline(args));
    if let Some(t) = &args.textfile {
        anyhow::ensure!(
            gpukb_monitor::daemon::textfile_name_ok(t),
            "--textfile {}: node_exporter reads only files named *.prom",
            t.display()
        );
    }
    anyhow::ensure!(args.max_db_mib >= 1, "--max-db-mib must be at least 1");
    let settings =
        gpukb_monitor::snapshot::without_cuinit(&crate::machine::deadlines(&args.machine));
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
        !offline(args),
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
    let levels: Vec<FailLevel> = fail_on
        .iter()
        .map(|f| match f {
            FailOn::Failure => FailLevel::Failure,
            FailOn::Warning => FailLevel::Warning,
            FailOn::Unknown => FailLevel::Unknown,
        })
        .collect();
    u8::from(gpukb_monitor::once::fails_on(verdict, &levels))
}

/// Where the agent caches ELF summaries: `$CACHE_DIRECTORY` (systemd), else
/// next to the history.
#[allow(clippy::disallowed_methods)] // gpukb's own settings, not facts about the machine
fn elf_cache(db: &std::path::Path) -> Option<PathBuf> {
    gpukb_monitor::paths::elf_cache_dir(&|k| std::env::var(k).ok(), db)
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
    let early = if args.once {
        gpukb_monitor::once::ask_nvml_first(&cfg, &host, args.machine.fingerprint.is_some())
    } else {
        None
    };
    if early.is_some() {
        steps.done("NVML: facts and sample");
    }
    let mut agent = Agent::open(cfg, host)?;
    steps.done("open history and KB");
    if !args.once {
        return daemon(args, &mut agent, out);
    }
    once(args, &mut agent, early, &mut steps, out)
}

/// `--once`: one pass of the agent (`gpukb_monitor::once`), the textfile
/// written, the answer printed; the exit code by the node's verdict.
fn once(
    args: &AgentArgs,
    agent: &mut Agent,
    early: Option<gpukb_monitor::once::NvmlFirst>,
    steps: &mut crate::steps::Steps,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let pass = gpukb_monitor::once::Once::begin(agent, early);
    if pass.opened_nvml() {
        steps.done("open NVML");
    }
    let fingerprint = match &args.machine.fingerprint {
        Some(path) => {
            let fp = crate::machine::read_fingerprint(path)?;
            steps.done("read the fingerprint");
            Some(fp)
        }
        None => None,
    };
    let found = pass.run(agent, fingerprint, &mut |s| steps.done(s))?;
    agent.write_textfile(&found.exposition)?;
    if args.json {
        let mut o = once_output(agent, &found);
        if let Some(c) = &found.canary {
            o.canary = Some(match c {
                Ok(results) => serde_json::to_value(results)?,
                Err(why) => serde_json::json!({ "unavailable": why }),
            });
        }
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        render_once(agent, &found, out)?;
        if let Some(c) = &found.canary {
            render_canary(c, out)?;
        }
    }
    steps.done("write textfile and answer");
    steps.total();
    Ok(ExitCode::from(exit_code(found.node, &args.fail_on)))
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

/// The rule's answer as NPD's exit status (0 ok, 1 problem, 2 unknown) and line.
fn npd_verdict(args: &AgentArgs, rule: NpdRule) -> anyhow::Result<(u8, String)> {
    let host = match &args.machine.fingerprint {
        Some(_) => gpukb_agent::host::Host::root_dir("/nonexistent-fingerprint-input"),
        None => args.machine.host_caching_in(false, None)?,
    };
    let answer = match rule {
        NpdRule::Hardware => gpukb_monitor::npd::hardware(
            &KernelLogSource::from_flag(&args.kernel_log, offline(args)),
            &host,
        )?,
        NpdRule::Stack => {
            let kb = gpukb_kb::Kb::open().context("knowledge base")?;
            let fp = match &args.machine.fingerprint {
                Some(path) => Some(crate::machine::read_fingerprint(path)?),
                None => None,
            };
            gpukb_monitor::npd::stack(
                fp,
                host,
                &crate::machine::deadlines(&args.machine),
                &args.machine.describe(),
                &kb,
            )
        }
    };
    let text = answer.text;
    Ok(match answer.verdict {
        Verdict::Failure => (1, text),
        Verdict::Unknown => (2, format!("unknown: {text}")),
        Verdict::Warning => (0, format!("warning: {text}")),
        Verdict::Ok => (0, format!("ok: {text}")),
    })
}

/// True when the machine is not this one: a capture, a copied root or a
/// fingerprint file.
fn offline(args: &AgentArgs) -> bool {
    args.machine.replay.is_some()
        || args.machine.fingerprint.is_some()
        || args.machine.root.is_some()
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

/// `--json`: what the pass found, as schema `agent-once`.
fn once_output(agent: &Agent, found: &Found) -> OnceOutput {
    let pass = &found.pass;
    let d = &pass.snapshot.diagnosis;
    let kernel_events = found
        .kernel_events
        .iter()
        .map(|e| OnceKernelEvent {
            kind: e.row.kind,
            code: e.row.code,
            gpu: e.row.gpu.clone(),
            seq: e.row.seq,
            at: gpukb_monitor::time::rfc3339(e.row.at),
            message: e.row.message.clone(),
            event_id: e.event_id,
            class: e.class.clone(),
        })
        .collect();
    OnceOutput {
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
        unknown_without_cuinit: d.undecided_for_want_of(gpukb_doctor::Unasked::Cuinit),
        health: OnceHealth {
            verdict: found.node,
            stack: d.verdict,
            hardware: found.hardware.clone(),
        },
        canary: None,
    }
}

/// The text answer: the snapshot, what changed, the new kernel-log events,
/// the hardware layer, what was not read or decided, where metrics went.
fn render_once(agent: &Agent, found: &Found, out: &mut dyn Write) -> anyhow::Result<()> {
    let pass = &found.pass;
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
    for e in &found.kernel_events {
        let k = &e.row;
        let code = k.code.map(|c| format!(" {c}")).unwrap_or_default();
        let id = e
            .event_id
            .map(|i| format!(" [event {i}]"))
            .unwrap_or_default();
        writeln!(
            out,
            "  kernel log: {}{code} on {} ({}){id}: {}",
            k.kind, k.gpu, e.class, k.message
        )?;
    }
    render_hardware(&found.hardware, found.node, out)?;
    if let Err(e) = &pass.kernel_log {
        writeln!(out, "  kernel log not read: {e}")?;
    }
    let need_cuinit = d.undecided_for_want_of(gpukb_doctor::Unasked::Cuinit);
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

/// The hardware layer's lines, when the kernel log's events are not all ok.
fn render_hardware(
    hardware: &gpukb_monitor::xid_policy::HardwareVerdict,
    node: Verdict,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if hardware.level == gpukb_monitor::xid_policy::Level::Ok {
        return Ok(());
    }
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
    )
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
