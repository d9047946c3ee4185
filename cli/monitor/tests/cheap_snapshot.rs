//! The agent's stack snapshot (`gpukb_monitor::snapshot::observe`) does not
//! load the CUDA driver API while NVML answers (no libcuda, no
//! `cuDriverGetVersion`, no `cuInit`), and asks libcuda for the driver's CUDA
//! version only when NVML cannot. Over every recorded machine, its diagnosis
//! must equal the one
//! the agent gave before, when it loaded libcuda for `cuDriverGetVersion`
//! but skipped `cuInit`: same verdict, same summary, same root causes, and
//! every check decided then is decided the same way now. Checks that need
//! `cuInit` are undecided in both, with a reason that names it.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use gpukb_agent::host::Host;
use gpukb_doctor::{diagnose, CheckId, CheckOutcome};
use gpukb_facts::Observed;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn captures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut v = Vec::new();
    for group in ["healthy", "broken"] {
        for e in std::fs::read_dir(root.join(group)).expect("fixtures") {
            let p = e.expect("entry").path();
            if p.join("capture.json").is_file() {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

/// What a live `cuDriverGetVersion`-only snapshot recorded: a replay answers
/// with the whole recorded CUDA section, so drop what needs `cuInit`.
fn without_cuinit(mut fp: gpukb_facts::Fingerprint) -> gpukb_facts::Fingerprint {
    if let Observed::Found { value, .. } = &mut fp.cuda {
        value.init = Observed::unobservable(
            gpukb_facts::Source::CudaDriver {
                call: "cuInit".into(),
            },
            "cuInit was not called (--quick)",
        );
        value.devices.clear();
    }
    fp
}

#[test]
fn cheap_snapshot_keeps_every_verdict_and_every_check_it_can_decide() {
    let kb = gpukb_kb::Kb::open().expect("kb");
    let caps = captures();
    assert!(
        caps.len() >= 20,
        "expected the recorded machines, got {}",
        caps.len()
    );
    let mut compared = 0;
    let mut loaded_libcuda = 0;
    let mut lost = Vec::new();
    for dir in &caps {
        let host = Arc::new(Host::replay(dir).expect("capture"));
        let before_settings = gpukb_agent::Settings {
            cuda_init: false,
            ..Default::default()
        };
        let before_fp = without_cuinit(gpukb_agent::fingerprint(host.clone(), &before_settings));
        let now_fp = without_cuinit(gpukb_monitor::snapshot::observe(host, &before_settings));
        if now_fp.nvml.is_found() {
            assert!(
                !now_fp.cuda.is_found(),
                "{}: with NVML answering, the snapshot must not load libcuda",
                dir.display()
            );
        }
        if now_fp.cuda.is_found() {
            loaded_libcuda += 1;
        }
        let mut before = diagnose(&before_fp, "m");
        kb.link_entries(&before_fp, &mut before);
        let mut now = diagnose(&now_fp, "m");
        kb.link_entries(&now_fp, &mut now);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if before.verdict != now.verdict {
            lost.push(format!(
                "{name}: verdict {:?} -> {:?}",
                before.verdict, now.verdict
            ));
        }
        if before.summary != now.summary {
            lost.push(format!(
                "{name}: summary {:?} -> {:?}",
                before.summary, now.summary
            ));
        }
        let roots = |d: &gpukb_doctor::Diagnosis| {
            d.findings
                .iter()
                .filter(|f| f.root_cause)
                .map(|f| (f.check, f.severity))
                .collect::<Vec<_>>()
        };
        if roots(&before) != roots(&now) {
            lost.push(format!(
                "{name}: root causes {:?} -> {:?}",
                roots(&before),
                roots(&now)
            ));
        }
        for (check, outcome) in &before.checks {
            if matches!(outcome, CheckOutcome::Undecided(_)) {
                continue;
            }
            let n = now.outcome(check.parse().unwrap());
            if &n != outcome {
                lost.push(format!("{name}: {check}: {outcome:?} -> {n:?}"));
            }
        }
        compared += 1;
    }
    assert!(
        lost.is_empty(),
        "checks lost without libcuda:\n{}",
        lost.join("\n")
    );
    assert_eq!(compared, caps.len());
    // The fallback is exercised: some recorded machines have no NVML answer.
    assert!(
        loaded_libcuda >= 3,
        "libcuda asked on {loaded_libcuda} machines"
    );
}

#[test]
fn checks_that_need_cuinit_stay_unknown_and_say_why() {
    let kb = gpukb_kb::Kb::open().expect("kb");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/healthy/h200-live-2026-12-01");
    let host = Arc::new(Host::replay(&dir).expect("capture"));
    let fp = gpukb_agent::fingerprint(
        host,
        &gpukb_agent::Settings {
            cuda_init: false,
            cuda_api: false,
            ..Default::default()
        },
    );
    let mut d = diagnose(&fp, "m");
    kb.link_entries(&fp, &mut d);
    match d.outcome(CheckId::CudaInitFailed) {
        CheckOutcome::Undecided(why) => assert!(
            why.contains("cuInit") || why.contains("CUDA driver API"),
            "reason should name what was not called: {why}"
        ),
        o => panic!("cuda_init_failed decided without cuInit: {o:?}"),
    }
    let u = d
        .undecided
        .iter()
        .find(|u| u.check == CheckId::CudaInitFailed)
        .expect("listed as undecided");
    assert!(u.reason.contains("cuInit") || u.reason.contains("CUDA driver API"));
}
