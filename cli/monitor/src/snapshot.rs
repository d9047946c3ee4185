//! One stack snapshot: the fingerprint the observer (`gpukb-agent`) takes,
//! judged by the doctor (`gpukb_doctor`). The agent takes the cheap
//! fingerprint: no `cuInit` (no CUDA context, no per-GPU quarter second) and,
//! while NVML answers, not even a libcuda load (tens of milliseconds of CPU
//! and megabytes of RSS) since NVML gives the driver's CUDA version too. When
//! NVML does not answer (a driver/library mismatch, the module not loaded,
//! nouveau, a Jetson before JetPack 7) `cuDriverGetVersion` is the only
//! source of that version, and the snapshot asks libcuda for it.

use gpukb_agent::host::Host;
use gpukb_doctor::{CheckId, CheckOutcome, Diagnosis};
use gpukb_facts::fingerprint::NvmlFacts;
use gpukb_facts::{Fingerprint, Observed};
use std::sync::Arc;

/// A judged fingerprint at a time.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Unix seconds.
    pub at: i64,
    pub fingerprint: Fingerprint,
    pub diagnosis: Diagnosis,
}

/// Observes `host` and judges it. `input` names the machine in the diagnosis.
pub fn take(
    host: Arc<Host>,
    settings: &gpukb_agent::Settings,
    input: &str,
    kb: Option<&gpukb_kb::Kb>,
) -> Snapshot {
    judge(observe(host, settings), input, kb, crate::time::now())
}

/// The cheap fingerprint of `host`: see the module documentation. `settings`
/// says whether libcuda may be loaded at all (`cuda_api`); the first pass
/// never loads it, the second only when NVML gave no driver facts.
pub fn observe(host: Arc<Host>, settings: &gpukb_agent::Settings) -> Fingerprint {
    let cheap = cheap(settings);
    let fp = gpukb_agent::fingerprint(host.clone(), &cheap);
    with_cuda_fallback(fp, host, settings)
}

/// [`observe`] with NVML's section asked before (`gpukb_agent::nvml_section`),
/// so that NVML could be let go of first (`agent --once`).
pub fn observe_with_nvml(
    host: Arc<Host>,
    settings: &gpukb_agent::Settings,
    nvml: Observed<NvmlFacts>,
) -> Fingerprint {
    let fp = gpukb_agent::fingerprint_with_nvml(host.clone(), &cheap(settings), nvml);
    with_cuda_fallback(fp, host, settings)
}

fn cheap(settings: &gpukb_agent::Settings) -> gpukb_agent::Settings {
    gpukb_agent::Settings {
        cuda_api: false,
        ..settings.clone()
    }
}

/// The observer's settings for an agent's snapshot: the deadlines given,
/// and no `cuInit` (the checks that need it stay unknown; the output says
/// so). libcuda is loaded only when NVML cannot give the driver's CUDA
/// version ([`observe`]).
pub fn without_cuinit(deadlines: &gpukb_agent::Settings) -> gpukb_agent::Settings {
    gpukb_agent::Settings {
        cuda_init: false,
        ..deadlines.clone()
    }
}

/// Asks libcuda for the driver's CUDA version only when NVML gave no answer.
fn with_cuda_fallback(
    mut fp: Fingerprint,
    host: Arc<Host>,
    settings: &gpukb_agent::Settings,
) -> Fingerprint {
    if settings.cuda_api && !fp.nvml.is_found() {
        fp.cuda = gpukb_agent::cuda_section(host, settings);
    }
    fp
}

/// Judges a fingerprint read elsewhere (a file, the history).
pub fn judge(
    fingerprint: Fingerprint,
    input: &str,
    kb: Option<&gpukb_kb::Kb>,
    at: i64,
) -> Snapshot {
    let mut diagnosis = gpukb_doctor::diagnose(&fingerprint, input);
    if let Some(kb) = kb {
        kb.link_entries(&fingerprint, &mut diagnosis);
    }
    Snapshot {
        at,
        fingerprint,
        diagnosis,
    }
}

/// The doctor's check that says the loaded kernel module and the driver's
/// user-space differ (a reboot or module reload is pending).
pub const UPGRADE_PENDING_CHECK: CheckId = CheckId::DriverUserspaceMismatch;

/// True when the diagnosis says a driver upgrade waits for a reboot: the
/// daemon then lets go of NVML so that it does not pin the old module.
pub fn upgrade_pending(d: &Diagnosis) -> bool {
    matches!(d.outcome(UPGRADE_PENDING_CHECK), CheckOutcome::Holds(_))
}
