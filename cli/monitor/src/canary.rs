//! The canary (`gpukb agent --canary DUR`, off by default): per GPU, every
//! DUR, a CUDA context, one small kernel from the `kernels` crate and a
//! host↔device copy, verified on the host. Split in three: the facts NVML
//! gives about each GPU ([`GpuFacts`]), the decision whether the canary may
//! touch it ([`decide`]: never a GPU in an exclusive or prohibited compute
//! mode, in MIG mode, with compute processes running, or one whose facts
//! could not be read), and the run itself, in a child process
//! ([`ChildLauncher`]: `gpukb agent --canary-child` with
//! `CUDA_VISIBLE_DEVICES=<UUID>`) that announces each CUDA call before making
//! it, so that each call is held to a deadline and a hung one is named and
//! killed with its process. A child process also keeps libcuda, its threads
//! and its device files out of the daemon: the daemon never pins the kernel
//! module through CUDA.

pub use crate::model::{ComputeMode, GpuFacts};
use gpukb_agent::probe::canary::CanaryRun;
use gpukb_agent::probe::ProbeError;
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why the canary left a GPU alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    /// A stable label for `gpukb_canary_skipped{reason}`.
    pub reason: &'static str,
    /// What was seen.
    pub detail: String,
}

/// Whether the canary may run on a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Run,
    Skip(Skip),
}

fn skip(reason: &'static str, detail: impl Into<String>) -> Decision {
    Decision::Skip(Skip {
        reason,
        detail: detail.into(),
    })
}

/// Decides from the facts whether the canary may create a context on this
/// GPU without taking it from a workload. Anything not known is a reason to
/// leave it alone.
pub fn decide(f: &GpuFacts) -> Decision {
    if let Some(why) = &f.unresponsive {
        return skip("gpu_unresponsive", why.clone());
    }
    match &f.mig_enabled {
        Ok(true) => {
            return skip(
                "mig_enabled",
                "MIG mode is on: contexts belong to MIG instances and their workloads",
            )
        }
        Ok(false) => {}
        Err(why) => return skip("facts_unreadable", format!("MIG mode: {why}")),
    }
    match &f.compute_mode {
        Ok(ComputeMode::Default) => {}
        Ok(ComputeMode::Prohibited) => {
            return skip(
                "compute_prohibited",
                "compute mode Prohibited: no context may be created",
            )
        }
        Ok(m @ (ComputeMode::ExclusiveProcess | ComputeMode::ExclusiveThread)) => {
            return skip(
                "exclusive_compute_mode",
                format!("compute mode {m:?}: a context of ours would lock the workload out"),
            )
        }
        Err(why) => return skip("facts_unreadable", format!("compute mode: {why}")),
    }
    match &f.compute_processes {
        Ok(0) => Decision::Run,
        Ok(n) => skip(
            "compute_processes_running",
            format!("{n} compute process(es) running"),
        ),
        Err(why) => skip("facts_unreadable", format!("compute processes: {why}")),
    }
}

/// How a canary on one GPU ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CanaryOutcome {
    /// The kernel ran and the result matched the host's.
    Passed { seconds: f64, image: String },
    /// A CUDA call failed, hung past its deadline, or the result was wrong.
    Failed {
        seconds: f64,
        /// The CUDA call that failed or hung (`result check` for a wrong result).
        call: String,
        /// The `CUresult` the call returned (none for a hang or a wrong result).
        code: Option<u32>,
        /// Its name (`CUDA_ERROR_ILLEGAL_ADDRESS`), or what happened.
        name: String,
    },
    /// Not run: see the reason.
    Skipped { reason: String, detail: String },
}

impl CanaryOutcome {
    /// One line for the history (`after` of an event) and the log.
    pub fn line(&self) -> String {
        match self {
            CanaryOutcome::Passed { image, .. } => format!("passed ({image})"),
            CanaryOutcome::Failed {
                call, code, name, ..
            } => match code {
                Some(c) => format!("failed: {call} returned {c} {name}"),
                None => format!("failed: {call}: {name}"),
            },
            CanaryOutcome::Skipped { reason, detail } => format!("skipped ({reason}): {detail}"),
        }
    }
}

/// One GPU's canary result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanaryResult {
    pub index: u32,
    pub uuid: String,
    pub model: String,
    /// Unix seconds.
    pub at: i64,
    pub outcome: CanaryOutcome,
}

/// The newest canary results, or why there are none (no NVML).
pub type CanaryStatus = Result<Vec<CanaryResult>, String>;

/// What the child process prints: `step NAME` before each CUDA call, then one
/// `result JSON` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChildReport {
    Ran(CanaryRun),
    Error { error: ProbeError },
}

/// The lines the child writes for `report` (`result ...`).
pub fn child_result_line(report: &ChildReport) -> String {
    format!(
        "result {}",
        serde_json::to_string(report).unwrap_or_else(|_| "{}".into())
    )
}

/// Runs the canary for one GPU.
pub trait Launcher {
    fn launch(&self, gpu: &GpuFacts) -> CanaryOutcome;
}

/// Runs `program args...` as the canary child with `CUDA_VISIBLE_DEVICES` set
/// to the GPU's UUID, each announced step held to `step_deadline`.
#[derive(Debug, Clone)]
pub struct ChildLauncher {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub step_deadline: Duration,
}

impl Launcher for ChildLauncher {
    // Not the host's Runner: it gives one timeout to a whole command and its
    // output at the end; the canary needs each announced step under its own
    // deadline, read as it comes.
    #[allow(clippy::disallowed_methods)]
    fn launch(&self, gpu: &GpuFacts) -> CanaryOutcome {
        let t0 = Instant::now();
        let failed = |call: &str, code: Option<u32>, name: String| CanaryOutcome::Failed {
            seconds: t0.elapsed().as_secs_f64(),
            call: call.to_string(),
            code,
            name,
        };
        let mut child = match Command::new(&self.program)
            .args(&self.args)
            .env("CUDA_VISIBLE_DEVICES", &gpu.uuid)
            .env("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                return failed(
                    "start the canary process",
                    None,
                    format!("{}: {e}", self.program.display()),
                )
            }
        };
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return failed("start the canary process", None, "no stdout".into());
        };
        let (tx, rx) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut step = String::from("start");
        let mut report: Option<ChildReport> = None;
        let mut timed_out = false;
        loop {
            match rx.recv_timeout(self.step_deadline) {
                Ok(line) => {
                    if let Some(s) = line.strip_prefix("step ") {
                        step = s.trim().to_string();
                    } else if let Some(j) = line.strip_prefix("result ") {
                        report = serde_json::from_str(j).ok();
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    break;
                }
            }
        }
        if timed_out {
            let _ = child.kill();
            // A process stuck inside the driver may not die at once: reap it
            // (and the reader) off this thread, never blocking the daemon.
            std::thread::spawn(move || {
                let _ = child.wait();
                let _ = reader.join();
            });
            return failed(
                &step,
                None,
                format!(
                    "did not return within {:.0} s (the canary process was killed)",
                    self.step_deadline.as_secs_f64()
                ),
            );
        }
        let status = child.wait();
        let _ = reader.join();
        match report {
            Some(ChildReport::Ran(run)) if run.ok => CanaryOutcome::Passed {
                seconds: t0.elapsed().as_secs_f64(),
                image: run.image,
            },
            Some(ChildReport::Ran(run)) => failed(
                "result check",
                None,
                format!(
                    "the kernel's result differs from the host's (max relative error {:.3e}, {})",
                    run.max_rel_err, run.image
                ),
            ),
            Some(ChildReport::Error { error }) => match error {
                ProbeError::Driver { call, code, name } => failed(&call, Some(code), name),
                e => failed(&step, None, e.to_string()),
            },
            None => failed(
                &step,
                None,
                match status {
                    Ok(s) => format!("the canary process ended ({s}) without a result"),
                    Err(e) => format!("the canary process could not be waited for: {e}"),
                },
            ),
        }
    }
}

/// Runs the canary on every GPU `facts` lists that [`decide`] allows, one
/// after the other; `blocked` (e.g. a driver upgrade waiting for a reboot)
/// skips them all.
pub fn run_all(
    facts: &[GpuFacts],
    launcher: &dyn Launcher,
    blocked: Option<&Skip>,
    now: i64,
) -> Vec<CanaryResult> {
    facts
        .iter()
        .map(|g| {
            let decision = match blocked {
                Some(b) => Decision::Skip(b.clone()),
                None => decide(g),
            };
            let outcome = match decision {
                Decision::Run => launcher.launch(g),
                Decision::Skip(s) => CanaryOutcome::Skipped {
                    reason: s.reason.to_string(),
                    detail: s.detail,
                },
            };
            CanaryResult {
                index: g.index,
                uuid: g.uuid.clone(),
                model: g.model.clone(),
                at: now,
                outcome,
            }
        })
        .collect()
}

/// The history's `what` for a GPU's canary events.
pub fn event_what(r: &CanaryResult) -> String {
    format!("gpu[{}].canary", r.index)
}

/// The event a result makes, given the last canary event recorded for that
/// GPU (`after` of it): a failure, a different failure, or a recovery.
/// Repeats of the same state and skips make none.
pub fn event_of(
    r: &CanaryResult,
    last_after: Option<&str>,
    meaning: &dyn Fn(&CanaryOutcome) -> String,
) -> Option<crate::store::Event> {
    let after = r.outcome.line();
    let make = |before: Option<String>| crate::store::Event {
        at: r.at,
        kind: "canary".into(),
        what: event_what(r),
        label: format!("canary on GPU {} ({}, {})", r.index, r.model, r.uuid),
        before,
        after: Some(after.clone()),
        meaning: meaning(&r.outcome),
    };
    match (&r.outcome, last_after) {
        (CanaryOutcome::Skipped { .. }, _) => None,
        (CanaryOutcome::Failed { .. }, Some(l)) if l == after => None,
        (CanaryOutcome::Failed { .. }, l) => Some(make(l.map(str::to_string))),
        (CanaryOutcome::Passed { .. }, Some(l)) if l.starts_with("failed") => {
            Some(make(Some(l.to_string())))
        }
        (CanaryOutcome::Passed { .. }, _) => None,
    }
}
