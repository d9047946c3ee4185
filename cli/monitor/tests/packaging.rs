//! The deployment files under `cli/packaging/` name only what the agent
//! exports: every metric in every Grafana panel expression, and the flags
//! the units and the DaemonSet pass; the NPD config stays within NPD's
//! limits; the Slurm health check drains and resumes as it says.
#![allow(clippy::disallowed_methods)] // tests read the committed files

use gpukb_agent::host::Host;
use gpukb_monitor::daemon::{Agent, Config, KernelLogSource};
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
        kernel_log: KernelLogSource::File(repo().join("cli/monitor/tests/fixtures/kmsg-xid.txt")),
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
    use gpukb_monitor::canary::{CanaryOutcome, CanaryResult};
    let canary: Vec<CanaryResult> = [
        CanaryOutcome::Passed {
            seconds: 0.2,
            image: "gpukb_probe.sm_90.cubin".into(),
        },
        CanaryOutcome::Failed {
            seconds: 0.3,
            call: "cuLaunchKernel".into(),
            code: Some(700),
            name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        },
        CanaryOutcome::Skipped {
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
    // Scheduled with or without the GPU Operator: two nodeSelectorTerms (ORed),
    // one per label, and no nodeSelector that would AND them back.
    let terms = ds
        .split("nodeSelectorTerms:")
        .nth(1)
        .expect("node affinity with nodeSelectorTerms");
    let term_lines: Vec<&str> = terms
        .lines()
        .filter(|l| l.trim_start().starts_with("- matchExpressions:"))
        .collect();
    assert_eq!(term_lines.len(), 2, "one term per label");
    for label in [
        "{key: nvidia.com/gpu.present, operator: In, values: [\"true\"]}",
        "{key: feature.node.kubernetes.io/pci-10de.present, operator: In, values: [\"true\"]}",
    ] {
        assert!(terms.contains(label), "{label}");
    }
    assert!(!ds
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && l.contains("nodeSelector:")));
    let prolog = std::fs::read_to_string(repo().join("cli/packaging/slurm/prolog.sh")).unwrap();
    assert!(
        prolog.contains("gpukb agent --once --fail-on failure") && prolog.contains("State=DRAIN")
    );
}

#[test]
fn the_npd_config_is_a_custom_plugin_monitor_within_npds_limits() {
    let text = std::fs::read_to_string(repo().join("cli/packaging/npd/gpukb-plugin-monitor.json"))
        .unwrap();
    let c: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["plugin"], "custom");
    let secs = |v: &serde_json::Value| -> f64 {
        gpukb_monitor::duration::parse(v.as_str().expect("a duration"))
            .unwrap()
            .as_secs_f64()
    };
    let global = secs(&c["pluginConfig"]["timeout"]);
    // NPD's defaults: timeout 5 s, max_output_length 80 (pkg/custompluginmonitor/types/config.go).
    assert!(global <= 5.0, "{global}");
    assert!(c["pluginConfig"]["max_output_length"].as_u64().unwrap() <= 80);
    assert!(secs(&c["pluginConfig"]["invoke_interval"]) >= global);
    let conditions: Vec<&str> = c["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["type"].as_str().unwrap())
        .collect();
    for want in ["GpuStackBroken", "GpuHardwareFault"] {
        assert!(conditions.contains(&want), "{conditions:?}");
    }
    let mut rules_seen = Vec::new();
    for r in c["rules"].as_array().unwrap() {
        assert_eq!(r["type"], "permanent");
        assert!(conditions.contains(&r["condition"].as_str().unwrap()));
        // A rule's timeout may not exceed the global one (NPD's Validate).
        assert!(secs(&r["timeout"]) <= global);
        let args: Vec<&str> = r["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let at = args.iter().position(|a| *a == "--npd").expect("--npd");
        assert!(args.contains(&"--once"));
        rules_seen.push(args[at + 1]);
    }
    rules_seen.sort();
    assert_eq!(rules_seen, ["hardware", "stack"]);
}

/// Runs `slurm/healthcheck.sh` with a fake `gpukb` (exit codes and lines from
/// the environment), a fake `scontrol` (the node's current reason; `update`
/// calls appended to a log) and a fake `hostname` on PATH. Returns the
/// `scontrol update` calls and the seconds it took.
fn healthcheck(
    hw: (i32, &str),
    stack: (i32, &str),
    reason: &str,
    sleep: u32,
) -> (Vec<String>, f64) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("scontrol.log");
    let write = |name: &str, body: &str| {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write("hostname", "echo node01\n");
    write(
        "gpukb",
        r#"sleep "$FAKE_SLEEP"
case "$*" in
  *"--npd hardware"*) echo "$FAKE_HW_LINE"; exit "$FAKE_HW_RC" ;;
  *"--npd stack"*) echo "$FAKE_STACK_LINE"; exit "$FAKE_STACK_RC" ;;
esac
exit 9
"#,
    );
    write(
        "scontrol",
        r#"if [ "$1" = show ]; then
  echo "NodeName=$3 Arch=x86_64 CoresPerSocket=8"
  echo "   State=IDLE ThreadsPerCore=1"
  [ -n "$FAKE_REASON" ] && echo "   Reason=$FAKE_REASON [root@2026-12-04T10:00:00]"
  exit 0
fi
printf '%s\n' "$*" >> "$FAKE_LOG"
"#,
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let t = std::time::Instant::now();
    let out = std::process::Command::new("sh")
        .arg(repo().join("cli/packaging/slurm/healthcheck.sh"))
        .env("PATH", path)
        .env("GPUKB_TIMEOUT", "2")
        .env("FAKE_SLEEP", sleep.to_string())
        .env("FAKE_HW_RC", hw.0.to_string())
        .env("FAKE_HW_LINE", hw.1)
        .env("FAKE_STACK_RC", stack.0.to_string())
        .env("FAKE_STACK_LINE", stack.1)
        .env("FAKE_REASON", reason)
        .env("FAKE_LOG", &log)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    (calls, t.elapsed().as_secs_f64())
}

#[test]
fn slurm_healthcheck_drains_and_resumes_only_its_own_drains() {
    let xid = "Xid 79 on PCI:0000:44:00 (RESTART_BM)";
    // A hardware failure drains, with the hw prefix and gpukb's line.
    let (calls, _) = healthcheck((1, xid), (0, "ok: fine"), "", 0);
    assert_eq!(
        calls,
        [format!(
            "update nodename=node01 state=drain reason=gpukb:hw: {xid}"
        )]
    );
    // A stack failure drains with the stack prefix.
    let (calls, _) = healthcheck((0, "ok"), (1, "1 root cause: driver mismatch"), "", 0);
    assert_eq!(
        calls,
        ["update nodename=node01 state=drain reason=gpukb:stack: 1 root cause: driver mismatch"]
    );
    // Already drained for the same reason: no second update.
    let (calls, _) = healthcheck((1, xid), (0, "ok"), &format!("gpukb:hw: {xid}"), 0);
    assert!(calls.is_empty(), "{calls:?}");
    // Both ok while gpukb's reason is set: resume.
    let (calls, _) = healthcheck((0, "ok"), (0, "ok"), &format!("gpukb:hw: {xid}"), 0);
    assert_eq!(calls, ["update nodename=node01 state=resume"]);
    // Both ok, someone else's reason: left alone.
    let (calls, _) = healthcheck((0, "ok"), (0, "ok"), "fan replacement (ops)", 0);
    assert!(calls.is_empty(), "{calls:?}");
    // Unknown (exit 2) changes nothing, even with gpukb's reason.
    let (calls, _) = healthcheck((2, "unknown: no kmsg"), (0, "ok"), "gpukb:hw: x", 0);
    assert!(calls.is_empty(), "{calls:?}");
    // A gpukb that hangs is cut by the per-rule timeout (2 s here): no change, exit 0.
    let (calls, secs) = healthcheck((1, xid), (1, "x"), "", 30);
    assert!(calls.is_empty(), "{calls:?}");
    assert!(secs < 15.0, "{secs} s");
}
