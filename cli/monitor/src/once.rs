//! `gpukb agent --once`: one pass of the agent, from the choices its flags
//! leave to the monitor (where the kernel log is read from, whether NVML is
//! asked first and let go of) to what the pass found: the stored snapshot and what changed, the new kernel-log
//! events with their Xid class and history id, the node's verdict and its
//! hardware layer, the exposition and the canary. The caller (the CLI) reads
//! the files the user named, renders [`Found`] and picks the exit code
//! ([`fails_on`] says whether `--fail-on` levels are met).

use crate::daemon::{Agent, CanaryStatus, Config, KernelLogSource, Pass};
use crate::snapshot::{self, Snapshot};
use crate::store::KernelRow;
use crate::telemetry::{NvmlSampler, Telemetry};
use crate::xid_policy::{self, EventView, HardwareVerdict};
use crate::MonitorError;
use gpukb_agent::host::{Host, Mode};
use gpukb_doctor::Verdict;
use gpukb_facts::fingerprint::{NvmlFacts, Source};
use gpukb_facts::{Fingerprint, Observed};
use std::path::PathBuf;
use std::sync::Arc;

impl KernelLogSource {
    /// The source `--kernel-log FLAG` names: `system` (this machine's log,
    /// not read when the stack comes from elsewhere: `offline` for a capture,
    /// a copied root or a fingerprint file), `off`, or a file of recorded
    /// `/dev/kmsg` lines.
    pub fn from_flag(flag: &str, offline: bool) -> KernelLogSource {
        match flag {
            "system" if offline => KernelLogSource::Off,
            "system" => KernelLogSource::System,
            "off" => KernelLogSource::Off,
            f => KernelLogSource::File(PathBuf::from(f)),
        }
    }
}

/// A verdict `--fail-on` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailLevel {
    Failure,
    /// A warning, or worse (a failure).
    Warning,
    Unknown,
}

/// True when `verdict` is one of `levels` (a warning level includes failure).
pub fn fails_on(verdict: Verdict, levels: &[FailLevel]) -> bool {
    levels.iter().any(|l| match l {
        FailLevel::Failure => verdict == Verdict::Failure,
        FailLevel::Warning => matches!(verdict, Verdict::Warning | Verdict::Failure),
        FailLevel::Unknown => verdict == Verdict::Unknown,
    })
}

/// What `--once` asked NVML before anything else.
pub struct NvmlFirst {
    telemetry: Telemetry,
    nvml: Observed<NvmlFacts>,
}

/// NVML first, then let go of it, when `--once` observes this live machine
/// without the canary (`from_file`: the stack comes from a fingerprint file).
/// `nvmlInit` alone allocates about 13.5 MB and maps libnvidia-ml and libcuda
/// (19 MB on an H200): `--once` asks NVML once, for the telemetry sample and
/// the fingerprint's section together, and shuts it down (the library
/// unloaded) before it opens the history and the KB, reads the files and
/// judges them, so that NVML's memory and gpukb's are never held at once.
/// (With `--canary` NVML stays open: the canary asks it which GPUs it may
/// use.) A driver whose `nvmlInit` missed its deadline is not asked again.
pub fn ask_nvml_first(cfg: &Config, host: &Arc<Host>, from_file: bool) -> Option<NvmlFirst> {
    if from_file || cfg.canary.is_some() || !matches!(host.mode(), Mode::Live) {
        return None;
    }
    let mut sampler = NvmlSampler::open(cfg.nvml_deadline);
    let telemetry = sampler.sample();
    let nvml = match sampler.init_did_not_answer() {
        Some(why) => Observed::failed(
            Source::Nvml {
                call: "nvmlInit_v2".into(),
            },
            why,
        ),
        None => gpukb_agent::nvml_section(host.clone(), &cfg.settings),
    };
    drop(sampler);
    Some(NvmlFirst { telemetry, nvml })
}

/// One kernel-log event this pass stored, with what the history and the Xid
/// policy say of it.
#[derive(Debug, Clone)]
pub struct NewKernelEvent {
    pub row: KernelRow,
    /// Its id in the history (`gpukb agent --ack ID`).
    pub event_id: Option<i64>,
    /// The Xid policy's class: `fail`, `warn`, `application` or `none`.
    pub class: String,
}

/// What one `--once` pass found.
pub struct Found {
    pub pass: Pass,
    /// The node's verdict: the snapshot's (the doctor's) with the hardware's.
    pub node: Verdict,
    /// This boot's kernel-log events not acknowledged, by the Xid policy.
    pub hardware: HardwareVerdict,
    /// The pass's new kernel-log events (`pass.new_kernel_events`), judged.
    pub kernel_events: Vec<NewKernelEvent>,
    /// The Prometheus exposition of this pass (for the textfile).
    pub exposition: String,
    /// With `--canary`: its results, or why it did not run.
    pub canary: Option<CanaryStatus>,
}

/// `--once` after the history opened: the telemetry sampler it uses, and
/// what NVML said first, if it was asked first.
pub struct Once {
    sampler: NvmlSampler,
    early: Option<NvmlFirst>,
    opened_nvml: bool,
}

impl Once {
    /// Picks the sampler: none when NVML was asked first and shut down,
    /// else the agent's. NVML's initialisation is reference-counted: opened
    /// here, the stack snapshot's own nvmlInit/nvmlShutdown cost next to
    /// nothing and the telemetry sample reuses the same session.
    pub fn begin(agent: &Agent, early: Option<NvmlFirst>) -> Once {
        let (sampler, opened_nvml) = match &early {
            Some(_) => (
                NvmlSampler::unavailable("NVML was shut down after this snapshot's sample"),
                false,
            ),
            None => (agent.sampler(), true),
        };
        Once {
            sampler,
            early,
            opened_nvml,
        }
    }

    /// True when [`Once::begin`] opened the agent's sampler (a step of its own).
    pub fn opened_nvml(&self) -> bool {
        self.opened_nvml
    }

    /// The pass over `fingerprint` (read from a file), or over this host
    /// observed now when `None`. `step` is told each step's end.
    pub fn run(
        mut self,
        agent: &mut Agent,
        fingerprint: Option<Fingerprint>,
        step: &mut dyn FnMut(&str),
    ) -> Result<Found, MonitorError> {
        let (snap, early_sample) = self.snapshot(agent, fingerprint, step);
        step("diagnose");
        let pass = agent.record(snap)?;
        let (node, hardware) = agent.node_verdict(&pass.snapshot)?;
        step("store, compare, kernel log");
        let telemetry = match early_sample {
            Some(t) => agent.with_platform(t, Some(&pass.snapshot)),
            None => agent.sample(&mut self.sampler, Some(&pass.snapshot)),
        };
        let canary = agent.canary_pass(&mut self.sampler, Some(&pass.snapshot))?;
        let exposition = agent.exposition(
            Some(&pass.snapshot),
            Some(&telemetry),
            pass.kernel_log.clone(),
            canary.as_ref(),
        )?;
        step("sample telemetry, metrics");
        let kernel_events = judged_events(agent, &pass.new_kernel_events)?;
        Ok(Found {
            pass,
            node,
            hardware,
            kernel_events,
            exposition,
            canary,
        })
    }

    /// The judged snapshot (of `fingerprint`, or observed now with what NVML
    /// said first), and the telemetry sample taken with NVML's answer.
    fn snapshot(
        &mut self,
        agent: &Agent,
        fingerprint: Option<Fingerprint>,
        step: &mut dyn FnMut(&str),
    ) -> (Snapshot, Option<Telemetry>) {
        let judge = |fp| snapshot::judge(fp, &agent.cfg.input, Some(&agent.kb), crate::time::now());
        if let Some(fp) = fingerprint {
            return (judge(fp), None);
        }
        let (fp, sample) = match self.early.take() {
            Some(NvmlFirst { telemetry, nvml }) => (
                snapshot::observe_with_nvml(agent.host.clone(), &agent.cfg.settings, nvml),
                Some(telemetry),
            ),
            None => (
                snapshot::observe(agent.host.clone(), &agent.cfg.settings),
                None,
            ),
        };
        step("fingerprint (no cuInit)");
        (judge(fp), sample)
    }
}

/// The Xid policy's view of a stored kernel-log row (no history id).
fn event_view(k: &KernelRow) -> EventView {
    EventView {
        event_id: None,
        kind: k.kind.to_string(),
        code: k.code,
        gpu: k.gpu.clone(),
        message: k.message.clone(),
    }
}

/// Each new kernel-log event with its history id and its Xid class.
fn judged_events(agent: &Agent, rows: &[KernelRow]) -> Result<Vec<NewKernelEvent>, MonitorError> {
    rows.iter()
        .map(|k| {
            Ok(NewKernelEvent {
                event_id: agent.store.kernel_event_id(&k.boot_id, k.seq)?,
                class: xid_policy::judge_event(&event_view(k)).class,
                row: k.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_on_warning_includes_failure() {
        let w = [FailLevel::Warning];
        assert!(fails_on(Verdict::Failure, &w));
        assert!(fails_on(Verdict::Warning, &w));
        assert!(!fails_on(Verdict::Ok, &w));
        assert!(!fails_on(Verdict::Unknown, &w));
        assert!(fails_on(Verdict::Unknown, &[FailLevel::Unknown]));
        assert!(!fails_on(Verdict::Failure, &[]));
    }

    #[test]
    fn the_system_log_is_not_read_for_another_machine() {
        assert_eq!(
            KernelLogSource::from_flag("system", true),
            KernelLogSource::Off
        );
        assert_eq!(
            KernelLogSource::from_flag("system", false),
            KernelLogSource::System
        );
        assert_eq!(
            KernelLogSource::from_flag("off", false),
            KernelLogSource::Off
        );
        assert_eq!(
            KernelLogSource::from_flag("kmsg.txt", true),
            KernelLogSource::File(PathBuf::from("kmsg.txt"))
        );
    }
}
