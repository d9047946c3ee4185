//! The monitoring loop. One pass ([`Agent::stack_pass`]) takes a stack
//! snapshot, compares it with the newest one in the history, stores both
//! and the events between them in one transaction, reads the kernel log,
//! and applies retention. `gpukb agent --once` is one pass plus one
//! telemetry sample and one exposition; the daemon ([`Agent::run`]) runs
//! two cadences: telemetry every `interval` through an NVML handle kept
//! open, and a pass every `stack_interval` or at once when a watched file
//! changes (checked by `stat`). SIGTERM/SIGINT stop it after the current
//! step; SIGHUP reopens the history and rewrites the textfile.

pub use crate::canary::CanaryStatus;
use crate::canary::{self as canary_mod, CanaryResult, Launcher};
use crate::diff::{self, Change, Side};
use crate::kernel_log;
use crate::metrics::{self, ExpositionInputs};
use crate::snapshot::{self, Snapshot};
use crate::store::{Event, KernelCount, KernelRow, Store};
use crate::telemetry::{NvmlSampler, Telemetry};
use crate::xid_policy::{self, EventView, HardwareVerdict};
use crate::MonitorError;
use gpukb_agent::host::{Host, Mode};
use gpukb_facts::fingerprint::KernelEventKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where kernel-log records come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelLogSource {
    /// `/dev/kmsg`, else `journalctl -k` (live machines only).
    System,
    /// A file of recorded `/dev/kmsg` lines.
    File(PathBuf),
    /// Not read.
    Off,
}

/// What the agent does and where it writes.
#[derive(Debug, Clone)]
pub struct Config {
    pub db: PathBuf,
    pub textfile: Option<PathBuf>,
    /// Retention: events and snapshots older than this go.
    pub keep: Duration,
    /// Retention: the history's live data stay under this many bytes.
    pub max_db_bytes: u64,
    pub kernel_log: KernelLogSource,
    /// The boot id to file kernel events under (default: the host's).
    pub boot_id: Option<String>,
    /// How the machine is named in the diagnosis.
    pub input: String,
    /// The observer's deadlines; the daemon never calls `cuInit`.
    pub settings: gpukb_agent::Settings,
    pub interval: Duration,
    pub stack_interval: Duration,
    /// Deadline of each NVML telemetry call.
    pub nvml_deadline: Duration,
    /// The canary (`--canary DUR`): off when `None`.
    pub canary: Option<CanaryConfig>,
}

/// How often and how the canary runs.
#[derive(Debug, Clone)]
pub struct CanaryConfig {
    pub every: Duration,
    pub launcher: crate::canary::ChildLauncher,
}

/// What one pass found.
#[derive(Debug, Clone)]
pub struct Pass {
    pub snapshot_id: i64,
    pub snapshot: Snapshot,
    /// The id of the snapshot it was compared with.
    pub previous: Option<i64>,
    pub changes: Vec<Change>,
    pub new_kernel_events: Vec<KernelRow>,
    /// `Err(reason)` when the kernel log could not be read.
    pub kernel_log: Result<(), String>,
}

/// The agent: the history, the KB and the host.
pub struct Agent {
    pub cfg: Config,
    pub host: Arc<Host>,
    pub kb: gpukb_kb::Kb,
    pub store: Store,
    boot_id: String,
}

/// gpukb's version, for `gpukb_info`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

impl Agent {
    /// Opens the history and the KB.
    pub fn open(cfg: Config, host: Arc<Host>) -> Result<Agent, MonitorError> {
        let store = Store::open(&cfg.db)?;
        let kb = gpukb_kb::Kb::open().map_err(|e| MonitorError::Kb(e.to_string()))?;
        let boot_id = cfg
            .boot_id
            .clone()
            .or_else(|| kernel_log::boot_id(&host))
            .unwrap_or_else(|| "unknown-boot".into());
        Ok(Agent {
            cfg,
            host,
            kb,
            store,
            boot_id,
        })
    }

    /// The boot kernel events are filed under.
    pub fn boot_id(&self) -> &str {
        &self.boot_id
    }

    /// Reopens the history (SIGHUP: after logrotate-style moves).
    pub fn reopen(&mut self) -> Result<(), MonitorError> {
        self.store = Store::open(&self.cfg.db)?;
        Ok(())
    }

    /// One stack pass: snapshot, compare, store, kernel log, retention.
    pub fn stack_pass(&mut self) -> Result<Pass, MonitorError> {
        let snap = snapshot::take(
            self.host.clone(),
            &self.cfg.settings,
            &self.cfg.input,
            Some(&self.kb),
        );
        self.record(snap)
    }

    /// Stores `snap` after comparing it with the newest stored snapshot.
    pub fn record(&mut self, snap: Snapshot) -> Result<Pass, MonitorError> {
        let prev_id = self.store.latest_id()?;
        let prev = self.store.latest()?;
        let changes = match &prev {
            Some(p) => {
                diff::compare(
                    &Side {
                        fingerprint: &p.fingerprint,
                        diagnosis: &p.diagnosis,
                    },
                    &Side {
                        fingerprint: &snap.fingerprint,
                        diagnosis: &snap.diagnosis,
                    },
                )
                .changes
            }
            None => Vec::new(),
        };
        let events: Vec<Event> = changes
            .iter()
            .map(|c| Event::of_change(snap.at, c))
            .collect();
        let id = self.store.record(&snap, &events)?;
        let (new_kernel_events, kernel_log) = match self.kernel_pass(snap.at) {
            Ok(v) => (v, Ok(())),
            Err(MonitorError::Sqlite { path, message }) => {
                return Err(MonitorError::Sqlite { path, message })
            }
            Err(
                e @ (MonitorError::Busy { .. }
                | MonitorError::ReadOnly { .. }
                | MonitorError::Corrupt { .. }),
            ) => return Err(e),
            Err(e) => (Vec::new(), Err(e.to_string())),
        };
        self.store
            .retain(snap.at, self.cfg.keep, self.cfg.max_db_bytes)?;
        Ok(Pass {
            snapshot_id: id,
            snapshot: snap,
            previous: prev_id,
            changes,
            new_kernel_events,
            kernel_log,
        })
    }

    /// Reads the kernel log and stores the NVIDIA events not stored yet.
    fn kernel_pass(&mut self, now: i64) -> Result<Vec<KernelRow>, MonitorError> {
        if self.cfg.kernel_log == KernelLogSource::Off {
            return Ok(Vec::new());
        }
        let records = read_records(&self.cfg.kernel_log, &self.host)?;
        let boot = kernel_log::boot_time(&self.host, now);
        let rows: Vec<KernelRow> = kernel_log::events(&records)
            .into_iter()
            .map(|(r, n)| KernelRow {
                boot_id: self.boot_id.clone(),
                seq: r.seq,
                at: boot + (r.ts_usec / 1_000_000) as i64,
                kind: n.kind,
                code: n.code,
                gpu: n.gpu,
                message: r.message.chars().take(500).collect(),
            })
            .collect();
        let kb = &self.kb;
        self.store.record_kernel(&rows, &|k, earlier| {
            let m = kernel_meaning(kb, k);
            match earlier {
                0 => m,
                n => format!("seen in {n} earlier boot(s) too: a reboot did not clear it; {m}"),
            }
        })
    }

    /// One canary pass (when `--canary` is on): the facts NVML gives now,
    /// the decision per GPU, the run, and an event in the history for a
    /// failure, a different failure or a recovery. `None` when the canary is off.
    pub fn canary_pass(
        &mut self,
        sampler: &mut NvmlSampler,
        snap: Option<&Snapshot>,
    ) -> Result<Option<CanaryStatus>, MonitorError> {
        let Some(c) = self.cfg.canary.clone() else {
            return Ok(None);
        };
        self.canary_with(sampler, snap, &c.launcher).map(Some)
    }

    /// [`Agent::canary_pass`] with a given launcher.
    pub fn canary_with(
        &mut self,
        sampler: &mut NvmlSampler,
        snap: Option<&Snapshot>,
        launcher: &dyn Launcher,
    ) -> Result<CanaryStatus, MonitorError> {
        let facts = match sampler.canary_facts() {
            Ok(f) => f,
            Err(why) => return Ok(Err(why)),
        };
        let blocked = snap
            .filter(|s| snapshot::upgrade_pending(&s.diagnosis))
            .map(|_| canary_mod::Skip {
                reason: "driver_upgrade_pending",
                detail: "the loaded kernel module and the driver's user-space differ: reboot first"
                    .into(),
            });
        let results = canary_mod::run_all(&facts, launcher, blocked.as_ref(), crate::time::now());
        self.record_canary(&results)?;
        Ok(Ok(results))
    }

    /// Stores the events `results` make against the history's last canary events.
    pub fn record_canary(&mut self, results: &[CanaryResult]) -> Result<(), MonitorError> {
        let mut events = Vec::new();
        for r in results {
            let last = self
                .store
                .last_after("canary", &canary_mod::event_what(r))?;
            let kb = &self.kb;
            if let Some(e) = canary_mod::event_of(r, last.as_deref(), &|o| canary_meaning(kb, o)) {
                events.push(e);
            }
        }
        self.store.record_events(&events)
    }

    /// Kernel events of this boot, grouped.
    pub fn kernel_counts(&self) -> Result<Vec<KernelCount>, MonitorError> {
        self.store.kernel_counts(&self.boot_id)
    }

    /// The hardware verdict: this boot's kernel events not acknowledged,
    /// judged by the Xid policy ([`crate::xid_policy`]). A newer boot id
    /// starts from none; a fail-class event that comes again on the same GPU
    /// in a later boot escalates to hardware.
    pub fn hardware(&self) -> Result<HardwareVerdict, MonitorError> {
        let events: Vec<EventView> = self
            .store
            .kernel_active(&self.boot_id)?
            .into_iter()
            .map(|k| EventView {
                event_id: k.event_id,
                kind: k.kind,
                code: k.code,
                gpu: k.gpu,
                message: k.message,
            })
            .collect();
        let earlier = self.store.kernel_in_other_boots(&self.boot_id)?;
        Ok(xid_policy::judge_boot_with_history(&events, &earlier))
    }

    /// The node's verdict: the snapshot's (the doctor's) with the hardware's.
    pub fn node_verdict(
        &self,
        snap: &Snapshot,
    ) -> Result<(gpukb_doctor::Verdict, HardwareVerdict), MonitorError> {
        let hw = self.hardware()?;
        Ok((xid_policy::combine(snap.diagnosis.verdict, hw.level), hw))
    }

    /// The exposition for the newest snapshot and `telemetry`.
    pub fn exposition(
        &self,
        snap: Option<&Snapshot>,
        telemetry: Option<&Telemetry>,
        kernel_log: Result<(), String>,
        canary: Option<&CanaryStatus>,
    ) -> Result<String, MonitorError> {
        let kernel = self.kernel_counts()?;
        let hardware = self.hardware()?;
        let changes = self.store.counters("stack_change:")?;
        Ok(metrics::build(&ExpositionInputs {
            version: VERSION,
            kb_as_of: gpukb_facts::select::TORCH_BUILDS_AS_OF,
            snapshot: snap,
            telemetry,
            kernel: &kernel,
            stack_changes: &changes,
            kernel_log,
            canary,
            hardware: Some(&hardware),
        })
        .render())
    }

    /// A telemetry sampler fit for this host: NVML on a live machine, none
    /// on a replayed capture (with the reason).
    pub fn sampler(&self) -> NvmlSampler {
        match self.host.mode() {
            Mode::Live => NvmlSampler::open(self.cfg.nvml_deadline),
            _ => {
                NvmlSampler::unavailable(format!("telemetry is not recorded in {}", self.cfg.input))
            }
        }
    }

    /// One telemetry sample: NVML, and on a Jetson the sysfs readings (which
    /// stand in for the GPU when NVML has nothing, as before JetPack 7).
    pub fn sample(&self, sampler: &mut NvmlSampler, snap: Option<&Snapshot>) -> Telemetry {
        self.with_platform(sampler.sample(), snap)
    }

    /// Adds to an NVML sample what the platform gives besides NVML (a Jetson's
    /// sysfs readings), as [`Agent::sample`] does.
    pub fn with_platform(&self, mut t: Telemetry, snap: Option<&Snapshot>) -> Telemetry {
        if let Some(j) = snap.and_then(|s| s.fingerprint.jetson.value()) {
            let (gpu, extra) = crate::jetson::sample(&self.host, j);
            if t.gpus.is_err() {
                t.gpus = Ok(vec![gpu]);
            }
            t.extra = extra;
        }
        t
    }

    /// Writes the textfile when one is configured.
    pub fn write_textfile(&self, text: &str) -> Result<(), MonitorError> {
        match &self.cfg.textfile {
            Some(p) => metrics::write_textfile(p, text),
            None => Ok(()),
        }
    }
}

/// The kernel log's records from `source` (none when it is off): `/dev/kmsg`
/// (else `journalctl -k`) on a live machine, or a file of recorded lines.
pub fn read_records(
    source: &KernelLogSource,
    host: &Host,
) -> Result<Vec<kernel_log::Record>, MonitorError> {
    Ok(match source {
        KernelLogSource::Off => Vec::new(),
        KernelLogSource::File(p) => kernel_log::read_kmsg(p, 1 << 20, Duration::from_secs(5))
            .map_err(MonitorError::Setup)?,
        KernelLogSource::System => {
            if host.mode() != &Mode::Live {
                return Err(MonitorError::Setup(
                    "the kernel log is read on live machines only (a capture does not record it)"
                        .into(),
                ));
            }
            let kmsg = host.root().join("dev/kmsg");
            match kernel_log::read_kmsg(&kmsg, 1 << 20, Duration::from_secs(5)) {
                Ok(r) => r,
                Err(kmsg_err) => kernel_log::read_journal(host)
                    .map_err(|j| MonitorError::Setup(format!("{kmsg_err}; {j}")))?,
            }
        }
    })
}

/// The hardware verdict of kernel-log records without a history (`--npd`):
/// every event of the ring buffer (this boot's) by the Xid policy; no
/// acknowledgement applies.
pub fn hardware_of_records(records: &[kernel_log::Record]) -> HardwareVerdict {
    let events: Vec<EventView> = kernel_log::events(records)
        .into_iter()
        .map(|(r, n)| EventView {
            event_id: None,
            kind: n.kind.to_string(),
            code: n.code,
            gpu: n.gpu,
            message: r.message,
        })
        .collect();
    xid_policy::judge_boot(&events)
}

/// What a kernel event means, from the KB's Xid table and linked entries.
pub fn kernel_meaning(kb: &gpukb_kb::Kb, k: &KernelRow) -> String {
    let code = match (k.kind, k.code) {
        (KernelEventKind::Xid, Some(c)) => Some(c),
        (KernelEventKind::FallenOffBus, _) => Some(79),
        (KernelEventKind::GspTimeout, _) => Some(119),
        _ => None,
    };
    let Some(code) = code else {
        return format!(
            "{} reported by the NVIDIA driver; see `gpukb search` with the line",
            k.kind
        );
    };
    match kb
        .explain(&format!("xid {code}"))
        .ok()
        .and_then(|v| v.into_iter().next())
    {
        Some(info) => {
            let mut s = format!("Xid {code} {}: {}", info.name, info.description.trim());
            if let Some(e) = info.linked.first() {
                s.push_str(&format!("; read: gpukb kb show {}", e.id));
            } else {
                s.push_str(&format!("; read: gpukb explain xid {code}"));
            }
            s.chars().take(600).collect()
        }
        None => format!("Xid {code}: not in gpukb's Xid table; see NVIDIA's Xid catalog"),
    }
}

/// What a canary outcome means: a failure's CUresult explained by the KB's
/// code table, with what to do.
pub fn canary_meaning(kb: &gpukb_kb::Kb, o: &canary_mod::CanaryOutcome) -> String {
    match o {
        canary_mod::CanaryOutcome::Passed { .. } => {
            "the GPU runs a kernel and copies data again".into()
        }
        canary_mod::CanaryOutcome::Skipped { detail, .. } => detail.clone(),
        canary_mod::CanaryOutcome::Failed {
            code, name, call, ..
        } => {
            let explained = code
                .and_then(|_| kb.explain(name).ok())
                .and_then(|v| v.into_iter().next());
            let mut s = match explained {
                Some(info) => format!(
                    "{call}: {} {}: {}",
                    info.number,
                    info.name,
                    info.description.trim()
                ),
                None if code.is_some() => {
                    format!("{call} returned {name}; see `gpukb explain {name}`")
                }
                None => format!("{call}: {name}"),
            };
            s.push_str("; the GPU could not run a small kernel: run `gpukb doctor` and check the kernel log (Xid)");
            s.chars().take(600).collect()
        }
    }
}

/// Files whose change means the stack may have changed, under the host's root.
pub fn watched_files(host: &Host, snap: Option<&Snapshot>) -> Vec<PathBuf> {
    let mut v: Vec<String> = [
        "/proc/driver/nvidia/version",
        "/sys/module/nvidia/version",
        "/var/lib/dpkg/status",
        "/var/lib/rpm/rpmdb.sqlite",
        "/etc/nv_tegra_release",
        "/var/lib/nvpmodel/status",
        "/etc/ld.so.cache",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(s) = snap {
        for env in &s.fingerprint.python {
            v.push(format!(
                "{}/torch/version.py",
                env.site_packages.trim_end_matches('/')
            ));
        }
    }
    v.iter()
        .map(|p| host.root().join(p.trim_start_matches('/')))
        .collect()
}

/// (mtime ns, size, inode) of each watched file, `None` when missing.
pub type Stamps = Vec<Option<(i128, u64, u64)>>;

/// Stats `paths`.
#[allow(clippy::disallowed_methods)] // stat only: whether a file changed, not what it says (the host seam reads it)
pub fn stamps(paths: &[PathBuf]) -> Stamps {
    use std::os::unix::fs::MetadataExt;
    paths
        .iter()
        .map(|p| {
            std::fs::metadata(p).ok().map(|m| {
                (
                    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
                    m.size(),
                    m.ino(),
                )
            })
        })
        .collect()
}

/// The flags the daemon's signal handlers set (SIGTERM/SIGINT: stop; SIGHUP: reopen).
pub struct SignalFlags {
    pub stop: &'static AtomicBool,
    pub hup: &'static AtomicU32,
}

static STOP: AtomicBool = AtomicBool::new(false);
static HUP: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_hup(_: libc::c_int) {
    HUP.fetch_add(1, Ordering::SeqCst);
}

/// Installs SIGTERM/SIGINT (stop) and SIGHUP (reopen) handlers.
pub fn install_signals() -> Result<SignalFlags, MonitorError> {
    fn install(sig: libc::c_int, f: extern "C" fn(libc::c_int)) -> Result<(), MonitorError> {
        // SAFETY: a zeroed sigaction with a handler that only touches atomics
        // (async-signal-safe); SA_RESTART keeps blocking reads going.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = f as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(MonitorError::Setup(format!(
                    "cannot install handler for signal {sig}"
                )));
            }
        }
        Ok(())
    }
    install(libc::SIGTERM, on_stop)?;
    install(libc::SIGINT, on_stop)?;
    install(libc::SIGHUP, on_hup)?;
    Ok(SignalFlags {
        stop: &STOP,
        hup: &HUP,
    })
}

/// What the HTTP endpoints serve, updated by the loop.
#[derive(Debug, Clone, Default)]
pub struct Shared {
    pub metrics: String,
    /// The node's verdict: the newest snapshot's (the doctor's) with the
    /// hardware's (this boot's kernel-log events by the Xid policy).
    pub verdict: Option<gpukb_doctor::Verdict>,
    /// When telemetry last completed (for `/healthz`).
    pub last_sample: Option<Instant>,
    pub interval: Duration,
}

/// What the daemon reports as it goes (the CLI prints it).
pub trait Log {
    fn line(&self, text: &str);
}

impl Agent {
    /// The daemon: runs until SIGTERM/SIGINT. `shared` feeds `--listen`.
    pub fn run(
        &mut self,
        signals: &SignalFlags,
        shared: &Arc<Mutex<Shared>>,
        log: &dyn Log,
    ) -> Result<(), MonitorError> {
        let mut sampler = self.sampler();
        let mut last: Option<Snapshot> = None;
        let mut kernel_status: Result<(), String> = Ok(());
        let mut next_stack = Instant::now();
        let mut next_sample = Instant::now();
        let mut watched = watched_files(&self.host, None);
        let mut stamps_seen = stamps(&watched);
        let mut hups = signals.hup.load(Ordering::SeqCst);
        let mut canary: Option<CanaryStatus> = None;
        let mut next_canary = Instant::now();
        let tick = Duration::from_secs(1).min(self.cfg.interval);
        while !signals.stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let h = signals.hup.load(Ordering::SeqCst);
            if h != hups {
                hups = h;
                self.reopen()?;
                log.line("SIGHUP: history reopened");
                next_sample = now;
            }
            let changed = {
                let s = stamps(&watched);
                let c = s != stamps_seen;
                stamps_seen = s;
                c
            };
            if now >= next_stack || changed {
                if changed {
                    log.line("a watched file changed: taking a stack snapshot now");
                }
                let pass = self.stack_pass()?;
                for c in &pass.changes {
                    log.line(&format!(
                        "change {}: {} -> {}{}",
                        c.what,
                        c.before.as_deref().unwrap_or("absent"),
                        c.after.as_deref().unwrap_or("absent"),
                        if c.meaning.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", c.meaning)
                        }
                    ));
                }
                for k in &pass.new_kernel_events {
                    log.line(&format!(
                        "kernel: {} {:?} on {}: {}",
                        k.kind, k.code, k.gpu, k.message
                    ));
                }
                if snapshot::upgrade_pending(&pass.snapshot.diagnosis) && sampler.is_open() {
                    sampler.release("NVML released: a driver upgrade waits for a reboot (the open handle would pin the old module)");
                    log.line("driver upgrade pending: NVML released until the module matches");
                } else if !sampler.is_open()
                    && !snapshot::upgrade_pending(&pass.snapshot.diagnosis)
                    && self.host.mode() == &Mode::Live
                {
                    sampler = self.sampler();
                }
                sampler.forgive();
                kernel_status = pass.kernel_log.clone();
                watched = watched_files(&self.host, Some(&pass.snapshot));
                stamps_seen = stamps(&watched);
                last = Some(pass.snapshot);
                next_stack = Instant::now() + self.cfg.stack_interval;
                next_sample = Instant::now();
            }
            if let Some(every) = self.cfg.canary.as_ref().map(|c| c.every) {
                if Instant::now() >= next_canary && last.is_some() {
                    canary = self.canary_pass(&mut sampler, last.as_ref())?;
                    if let Some(Ok(results)) = &canary {
                        for r in results {
                            if let canary_mod::CanaryOutcome::Failed { .. } = r.outcome {
                                log.line(&format!(
                                    "canary on GPU {} ({}): {}",
                                    r.index,
                                    r.uuid,
                                    r.outcome.line()
                                ));
                            }
                        }
                    }
                    next_canary = Instant::now() + every;
                    next_sample = Instant::now();
                }
            }
            if Instant::now() >= next_sample {
                let t = self.sample(&mut sampler, last.as_ref());
                let sampled_ok = t.gpus.is_ok() || !sampler.is_open();
                let text = self.exposition(
                    last.as_ref(),
                    Some(&t),
                    kernel_status.clone(),
                    canary.as_ref(),
                )?;
                if let Err(e) = self.write_textfile(&text) {
                    log.line(&e.to_string());
                }
                let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
                s.metrics = text;
                s.verdict = match last.as_ref() {
                    Some(l) => Some(self.node_verdict(l)?.0),
                    None => None,
                };
                s.interval = self.cfg.interval;
                if sampled_ok {
                    s.last_sample = Some(Instant::now());
                }
                next_sample = Instant::now() + self.cfg.interval;
            }
            std::thread::sleep(tick);
        }
        log.line("stopping");
        Ok(())
    }
}

/// Whether `p` names a usable textfile target (`*.prom` for node_exporter).
pub fn textfile_name_ok(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "prom")
}
