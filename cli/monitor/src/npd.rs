//! `gpukb agent --once --npd RULE`: the two rules a Node Problem Detector
//! custom plugin asks, judged without a history (NPD runs its rules
//! concurrently, and a lock wait could outlast the plugin's timeout). Each
//! answer is a verdict and one sentence; the caller maps the verdict to NPD's
//! exit status and prints the line.

use crate::daemon::{self, KernelLogSource};
use crate::snapshot;
use crate::xid_policy::Level;
use crate::MonitorError;
use gpukb_agent::host::Host;
use gpukb_doctor::Verdict;
use gpukb_facts::Fingerprint;
use std::sync::Arc;

/// One rule's answer: its verdict, and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpdAnswer {
    pub verdict: Verdict,
    /// One sentence (a failure's first reason, the doctor's summary).
    pub text: String,
}

fn answer(verdict: Verdict, text: impl Into<String>) -> NpdAnswer {
    NpdAnswer {
        verdict,
        text: text.into(),
    }
}

/// The `hardware` rule: every Xid/SXid event of the kernel log's ring buffer
/// (this boot's) by the Xid policy; no acknowledgement applies. Unknown when
/// the kernel log is not read.
pub fn hardware(source: &KernelLogSource, host: &Host) -> Result<NpdAnswer, MonitorError> {
    if source == &KernelLogSource::Off {
        return Ok(answer(
            Verdict::Unknown,
            "the kernel log is not read (--kernel-log off, or a recording)",
        ));
    }
    let records = daemon::read_records(source, host)?;
    let hw = daemon::hardware_of_records(&records);
    let first = hw.reasons.first().map(|r| r.text.clone());
    Ok(match hw.level {
        Level::Failure => answer(
            Verdict::Failure,
            first.unwrap_or_else(|| "hardware fault".into()),
        ),
        Level::Warning => answer(Verdict::Warning, first.unwrap_or_default()),
        Level::Ok => answer(Verdict::Ok, "no fail-class Xid in the kernel log"),
    })
}

/// The `stack` rule: the doctor's verdict on `fingerprint` (read from a
/// file), or on `host` observed now without `cuInit` when `None`; `input`
/// names the machine.
pub fn stack(
    fingerprint: Option<Fingerprint>,
    host: Host,
    deadlines: &gpukb_agent::Settings,
    input: &str,
    kb: &gpukb_kb::Kb,
) -> NpdAnswer {
    let fp = fingerprint
        .unwrap_or_else(|| snapshot::observe(Arc::new(host), &snapshot::without_cuinit(deadlines)));
    let snap = snapshot::judge(fp, input, Some(kb), crate::time::now());
    let d = snap.diagnosis;
    answer(d.verdict, d.summary)
}
