//! The Prometheus side: a writer of the text exposition format (version
//! 0.0.4: `# HELP`/`# TYPE` once per family, label values escaped, names
//! checked), the agent's metric set built from a snapshot, telemetry and
//! the history's counters, and the node_exporter textfile (written to a
//! temporary file in the same directory, then renamed over the target).
//!
//! Contract: every name starts with `gpukb_`; per-GPU gauges carry
//! dcgm-exporter's labels `gpu`, `UUID`, `modelName`, and the field names
//! and units of dcgm-exporter before 4.9 (`DCGM_FI_DEV_GPU_TEMP` →
//! `gpukb_gpu_temp`; MHz, MiB, %), so dashboards written for it need only the
//! prefix changed (4.9.0 renamed default fields and moved to Hz, bytes and
//! ratios). A value a platform cannot give
//! is left out and `gpukb_metric_supported{metric,gpu,reason} 0` says so;
//! it is never exported as 0.

use crate::canary::{CanaryOutcome, CanaryResult, CanaryStatus};
pub use crate::model::MetricType;
use crate::model::{Reading, Telemetry};
use crate::snapshot::Snapshot;
use crate::store::KernelCount;
use crate::xid_policy::HardwareVerdict;
use crate::MonitorError;
use gpukb_doctor::{Severity, Verdict};
use std::fmt::Write as _;
use std::path::Path;

/// One metric family: name, help, type and samples.
#[derive(Debug, Clone)]
pub struct Family {
    pub name: String,
    pub help: String,
    pub kind: MetricType,
    pub samples: Vec<(Vec<(String, String)>, f64)>,
}

impl Family {
    /// Adds a sample.
    pub fn add(&mut self, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.samples.push((
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            value,
        ));
        self
    }
}

/// A set of families in the order they were first named.
#[derive(Debug, Clone, Default)]
pub struct Exposition {
    families: Vec<Family>,
}

fn valid_metric_name(n: &str) -> bool {
    let mut cs = n.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn valid_label_name(n: &str) -> bool {
    let mut cs = n.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !n.starts_with("__")
}

/// A label value: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A HELP text: `\` → `\\`, newline → `\n`.
pub fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as Go's ParseFloat reads it.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

impl Exposition {
    /// The family `name` (created on first use). Panics on an invalid name:
    /// names are constants of this crate.
    pub fn family(&mut self, name: &str, help: &str, kind: MetricType) -> &mut Family {
        assert!(
            valid_metric_name(name) && name.starts_with("gpukb_"),
            "metric name {name}"
        );
        if let Some(i) = self.families.iter().position(|f| f.name == name) {
            return &mut self.families[i];
        }
        self.families.push(Family {
            name: name.into(),
            help: help.into(),
            kind,
            samples: Vec::new(),
        });
        self.families.last_mut().expect("just pushed")
    }

    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// The text format. Families without samples are left out; a sample
    /// whose label name is invalid is left out; repeated label sets keep the
    /// first.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in self.families.iter().filter(|f| !f.samples.is_empty()) {
            let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(&f.help));
            let kind = match f.kind {
                MetricType::Gauge => "gauge",
                MetricType::Counter => "counter",
            };
            let _ = writeln!(out, "# TYPE {} {kind}", f.name);
            let mut seen = std::collections::BTreeSet::new();
            for (labels, value) in &f.samples {
                if !labels.iter().all(|(k, _)| valid_label_name(k)) {
                    continue;
                }
                let mut ls = String::new();
                for (i, (k, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        ls.push(',');
                    }
                    let _ = write!(ls, "{k}=\"{}\"", escape_label_value(v));
                }
                if !seen.insert(ls.clone()) {
                    continue;
                }
                if ls.is_empty() {
                    let _ = writeln!(out, "{} {}", f.name, format_value(*value));
                } else {
                    let _ = writeln!(out, "{}{{{ls}}} {}", f.name, format_value(*value));
                }
            }
        }
        out
    }
}

/// Everything one exposition is built from.
pub struct ExpositionInputs<'a> {
    /// gpukb's version.
    pub version: &'a str,
    /// The date the compatibility tables the diagnosis uses are current as of.
    pub kb_as_of: &'a str,
    /// The newest stack snapshot (none yet while the first one runs).
    pub snapshot: Option<&'a Snapshot>,
    /// The newest telemetry sample.
    pub telemetry: Option<&'a Telemetry>,
    /// Kernel-log events of this boot, grouped.
    pub kernel: &'a [KernelCount],
    /// `gpukb_stack_change_total` by fact group, from the history.
    pub stack_changes: &'a [(String, u64)],
    /// Whether the kernel log could be read, and why not.
    pub kernel_log: Result<(), String>,
    /// The newest canary results (`None`: the canary is off).
    pub canary: Option<&'a CanaryStatus>,
    /// The hardware verdict over this boot's kernel-log events (`None`: not judged).
    pub hardware: Option<&'a HardwareVerdict>,
}

/// `gpukb_health`'s value: 0 ok, 1 warning, 2 failure, 3 unknown.
pub fn health_value(v: Verdict) -> f64 {
    match v {
        Verdict::Ok => 0.0,
        Verdict::Warning => 1.0,
        Verdict::Failure => 2.0,
        Verdict::Unknown => 3.0,
    }
}

/// The agent's metrics.
pub fn build(i: &ExpositionInputs<'_>) -> Exposition {
    let mut e = Exposition::default();
    e.family(
        "gpukb_info",
        "gpukb's version and the as-of date of its compatibility tables.",
        MetricType::Gauge,
    )
    .add(&[("version", i.version), ("kb_as_of", i.kb_as_of)], 1.0);
    if let Some(s) = i.snapshot {
        health_families(&mut e, s, i.hardware);
        snapshot_families(&mut e, s);
    }
    if let Some(t) = i.telemetry {
        telemetry_families(&mut e, t);
    }
    kernel_families(&mut e, i.kernel);
    let f = e.family(
        "gpukb_stack_change_total",
        "Stack changes seen between snapshots, by fact (driver.version, python.torch.version ...).",
        MetricType::Counter,
    );
    for (what, n) in i.stack_changes {
        f.add(&[("what", what)], *n as f64);
    }
    if let Some(Ok(results)) = i.canary {
        canary_families(&mut e, results);
    }
    supported_family(&mut e, i);
    e
}

/// `gpukb_health` and `gpukb_health_layer` (the stack's verdict and the hardware's), and
/// `gpukb_root_cause_info` for each root cause the doctor found.
fn health_families(e: &mut Exposition, s: &Snapshot, hardware: Option<&HardwareVerdict>) {
    let d = &s.diagnosis;
    let node = match hardware {
        Some(h) => crate::xid_policy::combine(d.verdict, h.level),
        None => d.verdict,
    };
    e.family(
        "gpukb_health",
        "The node's verdict over the stack (the doctor's) and the hardware (kernel-log events by the Xid policy): 0 ok, 1 warning, 2 failure, 3 unknown.",
        MetricType::Gauge,
    )
    .add(&[], health_value(node));
    let layer = e.family(
        "gpukb_health_layer",
        "The verdict of one layer: stack (the doctor's) or hardware (the Xid policy): 0 ok, 1 warning, 2 failure, 3 unknown.",
        MetricType::Gauge,
    );
    layer.add(&[("layer", "stack")], health_value(d.verdict));
    if let Some(h) = hardware {
        layer.add(
            &[("layer", "hardware")],
            health_value(crate::xid_policy::level_verdict(h.level)),
        );
    }
    let f = e.family(
        "gpukb_root_cause_info",
        "A root cause the doctor found (1 while it holds), by category and chain layer.",
        MetricType::Gauge,
    );
    for r in d
        .findings
        .iter()
        .filter(|f| f.root_cause && f.severity != Severity::Info)
    {
        f.add(
            &[
                ("category", &r.category),
                ("layer", r.layer.id()),
                ("check", r.check.name()),
            ],
            1.0,
        );
    }
}

/// What the newest stack snapshot saw: when it was taken, the Jetson's power mode, and
/// one `gpukb_gpu_info` per GPU with its driver version.
fn snapshot_families(e: &mut Exposition, s: &Snapshot) {
    e.family(
        "gpukb_last_snapshot_timestamp_seconds",
        "When the newest stack snapshot was taken (Unix time).",
        MetricType::Gauge,
    )
    .add(&[], s.at as f64);
    if let Some(pm) = s
        .fingerprint
        .jetson
        .value()
        .and_then(|j| j.power_mode.as_ref())
    {
        if let Some(id) = pm.id {
            e.family(
                "gpukb_nvpmodel_mode",
                "The Jetson's active nvpmodel power mode id, with its name.",
                MetricType::Gauge,
            )
            .add(&[("name", pm.name.as_deref().unwrap_or(""))], f64::from(id));
        }
    }
    if let Some(nvml) = s.fingerprint.nvml.value() {
        let f = e.family(
            "gpukb_gpu_info",
            "One per GPU the stack snapshot saw, with its driver version.",
            MetricType::Gauge,
        );
        for g in &nvml.gpus {
            f.add(
                &[
                    ("gpu", &g.index.to_string()),
                    ("UUID", &g.uuid),
                    ("modelName", &g.name),
                    ("driver_version", &nvml.driver_version.to_string()),
                ],
                1.0,
            );
        }
    }
}

/// The kernel-log counters of this boot: `gpukb_xid_total` and `gpukb_kernel_event_total`.
fn kernel_families(e: &mut Exposition, kernel: &[KernelCount]) {
    let f = e.family(
        "gpukb_xid_total",
        "NVRM Xid events in the kernel log of this boot, by GPU (PCI address) and Xid; a reboot resets it.",
        MetricType::Counter,
    );
    for k in kernel.iter().filter(|k| k.kind == "xid") {
        let code = k.code.map(|c| c.to_string()).unwrap_or_default();
        f.add(&[("gpu", &k.gpu), ("xid", &code)], k.count as f64);
    }
    let f = e.family(
        "gpukb_kernel_event_total",
        "NVIDIA kernel-log events of this boot other than Xid (sxid, fallen_off_bus, gsp_timeout); a reboot resets it.",
        MetricType::Counter,
    );
    for k in kernel.iter().filter(|k| k.kind != "xid") {
        let code = k.code.map(|c| c.to_string()).unwrap_or_default();
        f.add(
            &[("gpu", &k.gpu), ("kind", &k.kind), ("code", &code)],
            k.count as f64,
        );
    }
}

/// `gpukb_metric_supported`: 0, with the reason, for each metric that cannot be read here
/// (the canary, the kernel log, a board reading, telemetry as a whole or one GPU's value).
fn supported_family(e: &mut Exposition, i: &ExpositionInputs<'_>) {
    let sup = e.family(
        "gpukb_metric_supported",
        "0 when a metric cannot be read on this platform (it is then left out, not exported as 0), with the reason.",
        MetricType::Gauge,
    );
    if let Some(Err(why)) = i.canary {
        sup.add(
            &[
                ("metric", "gpukb_canary_ok"),
                ("gpu", "all"),
                ("reason", why),
            ],
            0.0,
        );
    }
    if let Err(why) = &i.kernel_log {
        sup.add(
            &[
                ("metric", "gpukb_xid_total"),
                ("gpu", "all"),
                ("reason", why),
            ],
            0.0,
        );
    }
    if let Some(t) = i.telemetry {
        telemetry_unsupported(sup, t);
    }
}

/// The samples of `gpukb_metric_supported` for the telemetry values that cannot be read.
fn telemetry_unsupported(sup: &mut Family, t: &Telemetry) {
    for x in &t.extra {
        if let Reading::Unsupported(why) = &x.reading {
            let what = x
                .labels
                .iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(",");
            sup.add(
                &[("metric", x.metric), ("gpu", &what), ("reason", why)],
                0.0,
            );
        }
    }
    match &t.gpus {
        Err(why) => {
            sup.add(
                &[("metric", "telemetry"), ("gpu", "all"), ("reason", why)],
                0.0,
            );
        }
        Ok(gpus) => {
            for g in gpus {
                for (m, r) in &g.readings {
                    if let Reading::Unsupported(why) = r {
                        sup.add(
                            &[
                                ("metric", m.name()),
                                ("gpu", &g.index.to_string()),
                                ("reason", why),
                            ],
                            0.0,
                        );
                    }
                }
            }
        }
    }
}

/// The telemetry sample's values: board-level readings, then each GPU's metrics and
/// `gpukb_gpu_unresponsive` for a GPU that did not answer.
fn telemetry_families(e: &mut Exposition, t: &Telemetry) {
    for x in &t.extra {
        if let Reading::Value(v) = x.reading {
            let labels: Vec<(&str, &str)> = x
                .labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            e.family(x.metric, x.help, MetricType::Gauge)
                .add(&labels, v);
        }
    }
    let Ok(gpus) = &t.gpus else { return };
    for g in gpus {
        let idx = g.index.to_string();
        let labels = [
            ("gpu", idx.as_str()),
            ("UUID", g.uuid.as_str()),
            ("modelName", g.model.as_str()),
        ];
        for (m, r) in &g.readings {
            if let Reading::Value(v) = r {
                e.family(m.name(), m.help(), m.kind()).add(&labels, *v);
            }
        }
        if let Some(unresponsive) = &g.unresponsive {
            e.family(
                "gpukb_gpu_unresponsive",
                "1 when an NVML call on this GPU did not answer within its deadline (not retried until the next stack snapshot).",
                MetricType::Gauge,
            )
            .add(&[labels[0], labels[1], labels[2], ("reason", unresponsive)], 1.0);
        }
    }
}

/// The canary's metric families: `gpukb_canary_ok` and `gpukb_canary_seconds`
/// for GPUs it ran on, `gpukb_canary_skipped{reason}` for the others, and
/// `gpukb_canary_failure_info{call,code,name}` for a failure.
fn canary_families(e: &mut Exposition, results: &[CanaryResult]) {
    for r in results {
        let idx = r.index.to_string();
        let id = [
            ("gpu", idx.as_str()),
            ("UUID", r.uuid.as_str()),
            ("modelName", r.model.as_str()),
        ];
        let ok = "1 when the canary (a context, a small kernel and a host<->device copy, verified) passed on this GPU, 0 when it failed.";
        let secs = "How long the newest canary took on this GPU (s).";
        match &r.outcome {
            CanaryOutcome::Passed { seconds, .. } => {
                e.family("gpukb_canary_ok", ok, MetricType::Gauge)
                    .add(&id, 1.0);
                e.family("gpukb_canary_seconds", secs, MetricType::Gauge)
                    .add(&id, *seconds);
            }
            CanaryOutcome::Failed {
                seconds,
                call,
                code,
                name,
            } => {
                e.family("gpukb_canary_ok", ok, MetricType::Gauge)
                    .add(&id, 0.0);
                e.family("gpukb_canary_seconds", secs, MetricType::Gauge)
                    .add(&id, *seconds);
                let code = code.map(|c| c.to_string()).unwrap_or_default();
                e.family(
                    "gpukb_canary_failure_info",
                    "The CUDA call the newest canary failed at, with its CUresult (code empty for a hang or a wrong result).",
                    MetricType::Gauge,
                )
                .add(
                    &[id[0], id[1], id[2], ("call", call), ("code", &code), ("name", name)],
                    1.0,
                );
            }
            CanaryOutcome::Skipped { reason, .. } => {
                e.family(
                    "gpukb_canary_skipped",
                    "1 when the canary left this GPU alone, with the reason (exclusive_compute_mode, compute_prohibited, mig_enabled, compute_processes_running, facts_unreadable, gpu_unresponsive, driver_upgrade_pending).",
                    MetricType::Gauge,
                )
                .add(&[id[0], id[1], id[2], ("reason", reason)], 1.0);
            }
        }
    }
}

/// Writes `text` to `path` atomically: a temporary file in the same
/// directory, flushed to disk, then renamed over `path` (node_exporter's
/// textfile collector never sees half a file).
#[allow(clippy::disallowed_methods)] // writes the user's output file, not machine state
pub fn write_textfile(path: &Path, text: &str) -> Result<(), MonitorError> {
    use std::io::Write;
    let err = |e: std::io::Error| MonitorError::Write {
        path: path.into(),
        message: e.to_string(),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| MonitorError::Write {
        path: path.into(),
        message: "not a file name".into(),
    })?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}
