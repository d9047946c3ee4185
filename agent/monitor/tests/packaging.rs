//! The deployment files under `cli/packaging/` name only what the agent
//! exports: every metric in every Grafana panel expression, and the flags
//! the units and the DaemonSet pass.
#![allow(clippy::disallowed_methods)] // tests read the committed files

use gpukb_agent::host::Host;
use gpukb_monitor::daemon::{Agent, Config, KernelLog};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every metric name the agent can export: what it rendered for a broken
/// capture with kernel events, plus the telemetry names (no GPU here).
fn exported() -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        db: dir.path().join("a.db"),
        textfile: None,
        keep: Duration::from_secs(86400),
        max_db_bytes: 1 << 24,
        kernel_log: KernelLog::File(repo().join("agent/monitor/tests/fixtures/kmsg-xid.txt")),
        boot_id: Some("b".into()),
        input: "t".into(),
        settings: gpukb_agent::Settings {
            cuda_init: false,
            ..Default::default()
        },
        interval: Duration::from_secs(30),
        stack_interval: Duration::from_secs(600),
        nvml_deadline: Duration::from_secs(1),
        canary: None,
    };
    // Healthy first, then broken: the second pass has stack changes to count.
    let healthy =
        Arc::new(Host::replay(repo().join("tests/fixtures/healthy/h200-with-pci")).unwrap());
    Agent::open(cfg.clone(), healthy)
        .unwrap()
        .stack_pass()
        .unwrap();
    let host = Arc::new(
        Host::replay(repo().join("tests/fixtures/broken/driver-userspace-upgraded-reboot-pending"))
            .unwrap(),
    );
    let mut a = Agent::open(cfg, host).unwrap();
    let p = a.stack_pass().unwrap();
    // With --canary: one GPU of each outcome.
    use gpukb_monitor::canary::{CanaryResult, Outcome};
    let canary: Vec<CanaryResult> = [
        Outcome::Passed {
            seconds: 0.2,
            image: "gpukb_probe.sm_90.cubin".into(),
        },
        Outcome::Failed {
            seconds: 0.3,
            call: "cuLaunchKernel".into(),
            code: Some(700),
            name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        },
        Outcome::Skipped {
            reason: "mig_enabled".into(),
            detail: "MIG".into(),
        },
    ]
    .into_iter()
    .enumerate()
    .map(|(i, outcome)| CanaryResult {
        index: i as u32,
        uuid: format!("GPU-{i}"),
        model: "NVIDIA H200".into(),
        at: 0,
        outcome,
    })
    .collect();
    let text = a
        .exposition(Some(&p.snapshot), None, Ok(()), Some(&Ok(canary)))
        .unwrap();
    for n in [
        "gpukb_canary_ok",
        "gpukb_canary_seconds",
        "gpukb_canary_failure_info",
        "gpukb_canary_skipped",
    ] {
        assert!(text.contains(&format!("# TYPE {n} gauge")), "{n}");
    }
    let mut names: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    names.extend(
        gpukb_monitor::telemetry::Metric::ALL
            .iter()
            .map(|m| m.name().to_string()),
    );
    names.extend(
        [
            "gpukb_metric_supported",
            "gpukb_gpu_unresponsive",
            "gpukb_thermal_zone_temp",
            "gpukb_power_rail_watts",
            "gpukb_nvpmodel_mode",
            "gpukb_gpu_info",
        ]
        .map(String::from),
    );
    names
}

#[test]
fn every_grafana_panel_names_exported_metrics() {
    let text =
        std::fs::read_to_string(repo().join("cli/packaging/grafana/gpukb-dashboard.json")).unwrap();
    let d: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names = exported();
    let metric = regex::Regex::new(r"\bgpukb_[a-z_]+").unwrap();
    let panels = d["panels"].as_array().unwrap();
    assert!(panels.len() >= 10);
    for p in panels {
        for t in p["targets"].as_array().unwrap() {
            let expr = t["expr"].as_str().unwrap();
            let used: Vec<&str> = metric.find_iter(expr).map(|m| m.as_str()).collect();
            assert!(
                !used.is_empty(),
                "panel {} names no gpukb metric: {expr}",
                p["title"]
            );
            for u in used {
                assert!(
                    names.contains(u),
                    "panel {} uses {u}, which the agent does not export ({names:?})",
                    p["title"]
                );
            }
        }
    }
    // The variable query too.
    let q = d["templating"]["list"][1]["query"].as_str().unwrap();
    assert!(metric.find_iter(q).all(|m| names.contains(m.as_str())));
}

#[test]
fn deployment_files_keep_their_promises() {
    let unit =
        std::fs::read_to_string(repo().join("cli/packaging/systemd/gpukb-agent.service")).unwrap();
    for needed in [
        "ProtectSystem=strict",
        "StateDirectory=gpukb",
        "DynamicUser=yes",
        "AmbientCapabilities=CAP_SYSLOG",
        "ExecReload=/bin/kill -HUP",
    ] {
        assert!(unit.contains(needed), "{needed}");
    }
    assert!(!unit.contains("User=root"));
    let ds = std::fs::read_to_string(repo().join("cli/packaging/k8s/daemonset.yaml")).unwrap();
    assert!(
        ds.contains("runtimeClassName: nvidia")
            && ds.contains("NVIDIA_VISIBLE_DEVICES, value: all")
    );
    let requests_gpu = ds
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && l.contains("nvidia.com/gpu:"));
    assert!(
        !requests_gpu,
        "the DaemonSet must not request nvidia.com/gpu"
    );
    assert!(!ds.contains("privileged: true"));
    let prolog = std::fs::read_to_string(repo().join("cli/packaging/slurm/prolog.sh")).unwrap();
    assert!(
        prolog.contains("gpukb agent --once --fail-on failure") && prolog.contains("State=DRAIN")
    );
}
