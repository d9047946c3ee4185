//! The canary without a GPU: the decision over recorded NVML facts (an H200
//! recorded idle and while a CUDA process ran, the MIG capture), the child
//! process protocol with real child processes (a result, a driver error, a
//! hang that must be killed within its deadline, a crash), and what a
//! sequence of results leaves in the history and in the exposition, read
//! back by a real Prometheus text-format parser.
#![allow(clippy::disallowed_methods)] // tests read fixtures and write scripts

use gpukb_agent::host::Host;
use gpukb_monitor::canary::{
    decide, run_all, CanaryOutcome, CanaryResult, ChildLauncher, ComputeMode, Decision, GpuFacts,
    Launcher,
};
use gpukb_monitor::daemon::{Agent, Config, KernelLogSource};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canary")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A GPU's canary facts from a recorded `nvidia-smi -q` (NVML's own
/// rendering): UUID, name, MIG mode, compute mode and compute processes.
fn smi_facts(text: &str, index: usize) -> GpuFacts {
    let gpus: Vec<&str> = text.split("\nGPU 0000").skip(1).collect();
    let g = gpus.get(index).expect("GPU section");
    let lines: Vec<&str> = g.lines().collect();
    let field = |name: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(name))
            .map(|i| {
                (
                    i,
                    lines[i].split_once(':').map(|(_, v)| v.trim().to_string()),
                )
            })
    };
    let value = |name: &str| field(name).and_then(|(_, v)| v).unwrap_or_default();
    // "MIG Mode" is a heading; its "Current" line follows.
    let mig = field("MIG Mode")
        .and_then(|(i, _)| lines.get(i + 1))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let procs = match value("Processes").as_str() {
        "None" => 0,
        _ => lines
            .iter()
            .filter(|l| {
                let t = l.trim();
                t.starts_with("Type") && t.split_once(':').is_some_and(|(_, v)| v.contains('C'))
            })
            .count() as u32,
    };
    GpuFacts {
        index: index as u32,
        uuid: value("GPU UUID"),
        model: value("Product Name"),
        compute_mode: ComputeMode::parse(&value("Compute Mode"))
            .ok_or_else(|| "no compute mode".to_string()),
        mig_enabled: match mig.as_deref() {
            Some("Enabled") => Ok(true),
            Some("Disabled") | Some("N/A") => Ok(false),
            other => Err(format!("MIG mode {other:?}")),
        },
        compute_processes: Ok(procs),
        unresponsive: None,
    }
}

fn recorded(name: &str, index: usize) -> GpuFacts {
    smi_facts(&std::fs::read_to_string(here().join(name)).unwrap(), index)
}

fn skip_reason(d: &Decision) -> Option<&'static str> {
    match d {
        Decision::Run => None,
        Decision::Skip(s) => Some(s.reason),
    }
}

#[test]
fn an_idle_h200_is_canaried_and_a_busy_one_is_left_alone() {
    let idle = recorded("h200-idle-nvidia-smi-q.txt", 0);
    assert_eq!(idle.model, "NVIDIA H200");
    assert!(idle.uuid.starts_with("GPU-"), "{}", idle.uuid);
    assert_eq!(idle.mig_enabled, Ok(false));
    assert_eq!(idle.compute_mode, Ok(ComputeMode::Default));
    assert_eq!(idle.compute_processes, Ok(0));
    assert_eq!(decide(&idle), Decision::Run);

    // No recording of a busy, exclusive or prohibited H200 exists yet (the GPU we
    // record on keeps its settings): the recorded idle facts with one fact changed.
    let busy = GpuFacts {
        compute_processes: Ok(1),
        ..idle.clone()
    };
    assert_eq!(
        skip_reason(&decide(&busy)),
        Some("compute_processes_running")
    );
    for (mode, reason) in [
        (ComputeMode::ExclusiveProcess, "exclusive_compute_mode"),
        (ComputeMode::ExclusiveThread, "exclusive_compute_mode"),
        (ComputeMode::Prohibited, "compute_prohibited"),
    ] {
        let f = GpuFacts {
            compute_mode: Ok(mode),
            ..idle.clone()
        };
        assert_eq!(skip_reason(&decide(&f)), Some(reason), "{mode:?}");
    }
    // What could not be read is a reason to stay away, never a default.
    let unknown = GpuFacts {
        compute_processes: Err("nvmlDeviceGetComputeRunningProcesses: not supported".into()),
        ..idle.clone()
    };
    assert_eq!(skip_reason(&decide(&unknown)), Some("facts_unreadable"));
    let hung = GpuFacts {
        unresponsive: Some("NVML sample of GPU 0 did not answer within 1 s".into()),
        ..idle
    };
    assert_eq!(skip_reason(&decide(&hung)), Some("gpu_unresponsive"));
}

#[test]
fn mig_gpus_are_skipped_from_the_recorded_mig_capture() {
    let fp = repo().join("tests/fixtures/broken/mig-without-instances");
    let host = Arc::new(Host::replay(&fp).unwrap());
    let f = gpukb_agent::fingerprint(
        host,
        &gpukb_agent::Settings {
            cuda_init: false,
            cuda_api: false,
            ..Default::default()
        },
    );
    let gpus = &f.nvml.value().expect("NVML").gpus;
    assert!(!gpus.is_empty());
    for g in gpus {
        let facts = GpuFacts {
            index: g.index,
            uuid: g.uuid.clone(),
            model: g.name.clone(),
            compute_mode: Ok(ComputeMode::Default),
            mig_enabled: g.mig_enabled.ok_or_else(|| "not read".to_string()),
            compute_processes: Ok(0),
            unresponsive: None,
        };
        assert_eq!(
            skip_reason(&decide(&facts)),
            Some("mig_enabled"),
            "{}",
            g.uuid
        );
    }
}

#[test]
fn compute_mode_spellings() {
    assert_eq!(ComputeMode::parse("Default"), Some(ComputeMode::Default));
    assert_eq!(
        ComputeMode::parse("Exclusive_Process"),
        Some(ComputeMode::ExclusiveProcess)
    );
    assert_eq!(
        ComputeMode::parse("E. Process"),
        Some(ComputeMode::ExclusiveProcess)
    );
    assert_eq!(
        ComputeMode::parse("Prohibited"),
        Some(ComputeMode::Prohibited)
    );
    assert_eq!(ComputeMode::parse("N/A"), None);
}

/// A child that behaves as `script` says, through `sh -c`.
fn child(dir: &Path, script: &str, deadline: Duration) -> ChildLauncher {
    let p = dir.join("child.sh");
    std::fs::write(&p, script).unwrap();
    ChildLauncher {
        program: PathBuf::from("/bin/sh"),
        args: vec![p.display().to_string()],
        step_deadline: deadline,
    }
}

fn some_gpu() -> GpuFacts {
    GpuFacts {
        index: 0,
        uuid: "GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8".into(),
        model: "NVIDIA H200".into(),
        compute_mode: Ok(ComputeMode::Default),
        mig_enabled: Ok(false),
        compute_processes: Ok(0),
        unresponsive: None,
    }
}

#[test]
fn child_protocol_result_error_hang_and_crash() {
    let dir = tempfile::tempdir().unwrap();
    let gpu = some_gpu();
    // The child sees the GPU it is meant for, and its result line is read.
    let ok = child(
        dir.path(),
        r#"[ "$CUDA_VISIBLE_DEVICES" = GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8 ] || exit 3
echo "step cuInit"
echo 'result {"kind":"ran","image":"gpukb_probe.sm_90.cubin","max_rel_err":0.0,"ok":true,"ms":210.5}'
"#,
        Duration::from_secs(5),
    );
    match ok.launch(&gpu) {
        CanaryOutcome::Passed { image, .. } => assert_eq!(image, "gpukb_probe.sm_90.cubin"),
        o => panic!("{o:?}"),
    }
    // A driver error keeps its call and CUresult.
    let err = child(
        dir.path(),
        r#"echo "step cuInit"; echo "step cuLaunchKernel"
echo 'result {"kind":"error","error":{"kind":"driver","call":"cuMemcpyDtoH","code":700,"name":"CUDA_ERROR_ILLEGAL_ADDRESS"}}'
"#,
        Duration::from_secs(5),
    );
    match err.launch(&gpu) {
        CanaryOutcome::Failed {
            call, code, name, ..
        } => {
            assert_eq!(call, "cuMemcpyDtoH");
            assert_eq!(code, Some(700));
            assert_eq!(name, "CUDA_ERROR_ILLEGAL_ADDRESS");
        }
        o => panic!("{o:?}"),
    }
    // A wrong result is a failure.
    let wrong = child(
        dir.path(),
        r#"echo 'result {"kind":"ran","image":"gpukb_probe.sm_90.cubin","max_rel_err":0.5,"ok":false,"ms":1.0}'"#,
        Duration::from_secs(5),
    );
    assert!(
        matches!(wrong.launch(&gpu), CanaryOutcome::Failed { ref call, .. } if call == "result check")
    );
    // A call that hangs is named, and the child is killed within the deadline.
    let hang = child(
        dir.path(),
        "echo 'step cuInit'\necho 'step cuDevicePrimaryCtxRetain'\nexec sleep 30\n",
        Duration::from_millis(700),
    );
    let t = Instant::now();
    match hang.launch(&gpu) {
        CanaryOutcome::Failed {
            call, code, name, ..
        } => {
            assert_eq!(call, "cuDevicePrimaryCtxRetain");
            assert_eq!(code, None);
            assert!(name.contains("killed"), "{name}");
        }
        o => panic!("{o:?}"),
    }
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "the hang was not cut short"
    );
    // A child that dies without a result names the step it died in.
    let crash = child(
        dir.path(),
        "echo 'step cuModuleLoadData'\nkill -SEGV $$\n",
        Duration::from_secs(5),
    );
    match crash.launch(&gpu) {
        CanaryOutcome::Failed { call, name, .. } => {
            assert_eq!(call, "cuModuleLoadData");
            assert!(name.contains("without a result"), "{name}");
        }
        o => panic!("{o:?}"),
    }
    // A missing program is a failure to start, not a panic.
    let missing = ChildLauncher {
        program: dir.path().join("no-such-gpukb"),
        args: vec![],
        step_deadline: Duration::from_secs(1),
    };
    assert!(
        matches!(missing.launch(&gpu), CanaryOutcome::Failed { ref call, .. } if call.contains("start"))
    );
}

/// Plays back outcomes in order (the CUDA path cannot run here).
struct Scripted(std::cell::RefCell<Vec<CanaryOutcome>>);
impl Launcher for Scripted {
    fn launch(&self, _: &GpuFacts) -> CanaryOutcome {
        self.0.borrow_mut().remove(0)
    }
}

fn parse(text: &str) -> Vec<(String, HashMap<String, String>, f64)> {
    let exp = openmetrics_parser::prometheus::parse_prometheus(text)
        .unwrap_or_else(|e| panic!("not valid Prometheus text: {e:?}\n{text}"));
    let mut out = Vec::new();
    for (name, fam) in &exp.families {
        for s in fam.iter_samples() {
            let labels = s
                .get_labelset()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let v = match &s.value {
                openmetrics_parser::PrometheusValue::Gauge(n)
                | openmetrics_parser::PrometheusValue::Unknown(n) => n.as_f64(),
                openmetrics_parser::PrometheusValue::Counter(c) => c.value.as_f64(),
                o => panic!("{o:?}"),
            };
            out.push((name.clone(), labels, v));
        }
    }
    out
}

fn get(
    p: &[(String, HashMap<String, String>, f64)],
    name: &str,
    l: &[(&str, &str)],
) -> Option<f64> {
    p.iter()
        .find(|(n, ls, _)| {
            n == name
                && l.iter()
                    .all(|(k, v)| ls.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.2)
}

/// An agent over the recorded healthy H200 with its history in `dir` (no kernel log, no canary).
fn replayed_agent(dir: &Path) -> Agent {
    let cfg = Config {
        db: dir.join("a.db"),
        textfile: None,
        keep: Duration::from_secs(86400),
        max_db_bytes: 1 << 24,
        kernel_log: KernelLogSource::Off,
        boot_id: Some("b".into()),
        input: "t".into(),
        settings: gpukb_agent::Settings {
            cuda_init: false,
            cuda_api: false,
            ..Default::default()
        },
        interval: Duration::from_secs(30),
        stack_interval: Duration::from_secs(600),
        nvml_deadline: Duration::from_secs(1),
        canary: None,
    };
    let host =
        Arc::new(Host::replay(repo().join("tests/fixtures/healthy/h200-live-2026-12-01")).unwrap());
    Agent::open(cfg, host).unwrap()
}

/// The exposition after a failed canary on `gpu` (GPU 0) and a skipped busy GPU 1.
fn assert_failure_metrics(text: &str, gpu: &GpuFacts) {
    let p = parse(text);
    let id = [
        ("gpu", "0"),
        ("UUID", gpu.uuid.as_str()),
        ("modelName", "NVIDIA H200"),
    ];
    assert_eq!(get(&p, "gpukb_canary_ok", &id), Some(0.0));
    assert_eq!(get(&p, "gpukb_canary_seconds", &id), Some(0.4));
    assert_eq!(
        get(
            &p,
            "gpukb_canary_failure_info",
            &[("gpu", "0"), ("call", "cuMemcpyDtoH"), ("code", "700")]
        ),
        Some(1.0)
    );
    assert_eq!(
        get(
            &p,
            "gpukb_canary_skipped",
            &[("gpu", "1"), ("reason", "compute_processes_running")]
        ),
        Some(1.0)
    );
    assert_eq!(
        get(&p, "gpukb_canary_ok", &[("gpu", "1")]),
        None,
        "a skipped GPU has no canary_ok"
    );
}

/// The history after pass, fail, the same failure, pass: the failure and the recovery.
fn assert_failure_and_recovery_events(a: &Agent) {
    let h = a.store.history(None).unwrap();
    let ev: Vec<_> = h.events.iter().filter(|e| e.kind == "canary").collect();
    assert_eq!(ev.len(), 2, "{ev:#?}");
    assert_eq!(ev[0].what, "gpu[0].canary");
    assert_eq!(ev[0].before, None);
    let after = ev[0].after.as_deref().unwrap();
    assert!(
        after.contains("700") && after.contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{after}"
    );
    assert!(ev[0].meaning.contains("cuMemcpyDtoH"), "{}", ev[0].meaning);
    assert_eq!(ev[1].before.as_deref(), Some(after));
    assert!(ev[1].after.as_deref().unwrap().starts_with("passed"));
}

#[test]
fn failures_are_events_with_their_curesult_and_metrics_parse() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = replayed_agent(dir.path());
    let snap = a.stack_pass().unwrap().snapshot;
    let gpu = some_gpu();
    let busy = GpuFacts {
        index: 1,
        uuid: "GPU-1".into(),
        compute_processes: Ok(2),
        ..some_gpu()
    };
    let passed = || CanaryOutcome::Passed {
        seconds: 0.21,
        image: "gpukb_probe.sm_90.cubin".into(),
    };
    let failed = || CanaryOutcome::Failed {
        seconds: 0.4,
        call: "cuMemcpyDtoH".into(),
        code: Some(700),
        name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
    };
    // pass, fail, the same failure again, pass: two events (the failure, the recovery).
    let script = Scripted(std::cell::RefCell::new(vec![
        passed(),
        failed(),
        failed(),
        passed(),
    ]));
    let mut last: Vec<CanaryResult> = Vec::new();
    for round in 0..4 {
        last = run_all(
            &[gpu.clone(), busy.clone()],
            &script,
            None,
            1_700_000_000 + round,
        );
        a.record_canary(&last).unwrap();
        if round == 1 {
            let text = a
                .exposition(Some(&snap), None, Ok(()), Some(&Ok(last.clone())))
                .unwrap();
            assert_failure_metrics(&text, &gpu);
        }
    }
    let text = a
        .exposition(Some(&snap), None, Ok(()), Some(&Ok(last)))
        .unwrap();
    let p = parse(&text);
    assert_eq!(get(&p, "gpukb_canary_ok", &[("gpu", "0")]), Some(1.0));
    assert_eq!(get(&p, "gpukb_canary_failure_info", &[("gpu", "0")]), None);
    assert_failure_and_recovery_events(&a);

    // Without NVML there is no canary, and the exposition says why.
    let text = a
        .exposition(
            Some(&snap),
            None,
            Ok(()),
            Some(&Err("NVML: not found".into())),
        )
        .unwrap();
    let p = parse(&text);
    assert_eq!(
        get(
            &p,
            "gpukb_metric_supported",
            &[("metric", "gpukb_canary_ok"), ("reason", "NVML: not found")]
        ),
        Some(0.0)
    );
}

#[test]
fn a_pending_driver_upgrade_skips_every_gpu() {
    let blocked = gpukb_monitor::canary::Skip {
        reason: "driver_upgrade_pending",
        detail: "reboot first".into(),
    };
    let script = Scripted(std::cell::RefCell::new(vec![]));
    let r = run_all(&[some_gpu()], &script, Some(&blocked), 0);
    assert!(
        matches!(&r[0].outcome, CanaryOutcome::Skipped { reason, .. } if reason == "driver_upgrade_pending")
    );
}
