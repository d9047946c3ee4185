//! The monitor over recorded machines and recorded kernel-log lines: the
//! events of a scripted sequence (healthy H200 → user-space driver upgraded
//! under the loaded module → rebooted), what the history holds, the
//! exposition parsed back by a real Prometheus text-format parser, the
//! kernel-log de-duplication, and retention.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use gpukb_agent::host::Host;
use gpukb_monitor::daemon::{Agent, Config, KernelLogSource};
use gpukb_monitor::metrics::{self, Exposition, MetricType};
use gpukb_monitor::store::Store;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn config(db: &Path, kernel_log: KernelLogSource) -> Config {
    let settings = gpukb_agent::Settings {
        cuda_init: false,
        cuda_api: false,
        ..Default::default()
    };
    Config {
        db: db.into(),
        textfile: None,
        keep: Duration::from_secs(30 * 86400),
        max_db_bytes: 64 << 20,
        kernel_log,
        boot_id: Some("boot-a".into()),
        input: "test".into(),
        settings,
        interval: Duration::from_secs(30),
        stack_interval: Duration::from_secs(600),
        nvml_deadline: Duration::from_secs(1),
        canary: None,
    }
}

fn agent_on(capture: &str, cfg: Config) -> Agent {
    let host = Arc::new(Host::replay(fixtures().join(capture)).expect("capture"));
    Agent::open(cfg, host).expect("agent")
}

/// One parsed sample: family, its type, labels, value.
type Parsed = Vec<(String, String, HashMap<String, String>, f64)>;

fn parse(text: &str) -> Parsed {
    let exp = openmetrics_parser::prometheus::parse_prometheus(text)
        .unwrap_or_else(|e| panic!("not valid Prometheus text: {e:?}\n{text}"));
    let mut out = Vec::new();
    for (name, fam) in &exp.families {
        let kind = format!("{:?}", fam.family_type);
        for s in fam.iter_samples() {
            let ls = s.get_labelset().expect("labels");
            let labels: HashMap<String, String> =
                ls.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let v = match &s.value {
                openmetrics_parser::PrometheusValue::Gauge(n)
                | openmetrics_parser::PrometheusValue::Unknown(n) => n.as_f64(),
                openmetrics_parser::PrometheusValue::Counter(c) => c.value.as_f64(),
                other => panic!("unexpected value {other:?}"),
            };
            out.push((name.clone(), kind.clone(), labels, v));
        }
    }
    out
}

fn value(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    p.iter()
        .find(|(n, _, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.3)
}

#[test]
fn upgrade_then_reboot_sequence_gives_events_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let steps = [
        "healthy/h200-with-pci",
        "broken/driver-userspace-upgraded-reboot-pending",
        "healthy/h200-with-pci",
    ];
    let mut passes = Vec::new();
    for s in steps {
        let mut a = agent_on(s, config(&db, KernelLogSource::Off));
        passes.push(a.stack_pass().expect("pass"));
    }
    assert!(passes[0].changes.is_empty() && passes[0].previous.is_none());
    // The upgrade: the loaded module is the old release, the doctor says reboot.
    let up = &passes[1];
    let drv = up
        .changes
        .iter()
        .find(|c| c.what == "driver.version")
        .expect("driver.version changed");
    assert_eq!(drv.before.as_deref(), Some("580.159.04"));
    assert_eq!(drv.after.as_deref(), Some("580.95.05"));
    assert!(
        drv.meaning
            .contains("upgraded under the loaded kernel module"),
        "{}",
        drv.meaning
    );
    let v = up
        .changes
        .iter()
        .find(|c| c.what == "health.verdict")
        .unwrap();
    assert_eq!(
        (v.before.as_deref(), v.after.as_deref()),
        (Some("ok"), Some("failure"))
    );
    assert!(gpukb_monitor::snapshot::upgrade_pending(
        &up.snapshot.diagnosis
    ));
    // After the reboot: the module matches again, the finding is cleared.
    let back = &passes[2];
    assert!(back
        .changes
        .iter()
        .any(|c| c.what == "finding[driver_userspace_mismatch]" && c.after.is_none()));
    assert!(!gpukb_monitor::snapshot::upgrade_pending(
        &back.snapshot.diagnosis
    ));

    // The DB holds three snapshots and the events; the first and third
    // fingerprints are identical but only adjacent ones share a blob.
    let store = Store::open_existing(&db).unwrap();
    let h = store.history(None).unwrap();
    assert_eq!(
        h.snapshots
            .iter()
            .map(|s| s.verdict.as_str())
            .collect::<Vec<_>>(),
        ["ok", "failure", "ok"]
    );
    assert!(h
        .events
        .iter()
        .any(|e| e.kind == "stack" && e.what == "driver.version"));
    assert!(h.events.iter().any(|e| e.kind == "finding"));
    let snap2 = store.snapshot(h.snapshots[1].id).unwrap();
    assert_eq!(snap2.diagnosis.verdict, gpukb_doctor::Verdict::Failure);
    assert_eq!(
        store
            .counters("stack_change:")
            .unwrap()
            .iter()
            .find(|(w, _)| w == "driver.version")
            .map(|c| c.1),
        Some(2)
    );
    assert_eq!(
        store.schema_version().unwrap(),
        gpukb_monitor::store::SCHEMA_VERSION
    );
}

#[test]
fn torch_dropping_the_gpus_arch_is_a_stack_event_with_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    agent_on("healthy/h200-with-pci", config(&db, KernelLogSource::Off))
        .stack_pass()
        .unwrap();
    let p = agent_on(
        "broken/torch-drops-volta",
        config(&db, KernelLogSource::Off),
    )
    .stack_pass()
    .unwrap();
    let cc = p
        .changes
        .iter()
        .find(|c| c.what == "gpu[0].compute_capability")
        .expect("cc change");
    assert_eq!(cc.after.as_deref(), Some("7.0"));
    assert!(cc.meaning.contains("sm_70"), "{}", cc.meaning);
    assert!(p.changes.iter().any(|c| c.what == "gpu[0].uuid"));
}

#[test]
fn exposition_parses_back_with_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let kmsg = fixtures().join("../../cli/monitor/tests/fixtures/kmsg-xid.txt");
    let mut a = agent_on(
        "broken/driver-userspace-upgraded-reboot-pending",
        config(&db, KernelLogSource::File(kmsg)),
    );
    let p = a.stack_pass().unwrap();
    let mut sampler = a.sampler();
    let t = sampler.sample();
    assert!(t.gpus.is_err(), "a capture has no live NVML");
    let text = a
        .exposition(Some(&p.snapshot), Some(&t), p.kernel_log.clone(), None)
        .unwrap();
    let parsed = parse(&text);
    assert!(parsed.iter().all(|(n, ..)| n.starts_with("gpukb_")));
    assert_eq!(value(&parsed, "gpukb_health", &[]), Some(2.0));
    assert_eq!(
        value(
            &parsed,
            "gpukb_info",
            &[("kb_as_of", gpukb_facts::select::TORCH_BUILDS_AS_OF)]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &parsed,
            "gpukb_root_cause_info",
            &[
                ("category", "driver_lib_mismatch_reboot"),
                ("layer", "kernel_driver")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &parsed,
            "gpukb_xid_total",
            &[("gpu", "PCI:0000:cb:00"), ("xid", "13")]
        ),
        Some(3.0)
    );
    assert_eq!(
        value(
            &parsed,
            "gpukb_xid_total",
            &[("gpu", "PCI:0000:44:00"), ("xid", "79")]
        ),
        Some(1.0)
    );
    let kinds: Vec<&str> = parsed
        .iter()
        .filter(|s| s.0 == "gpukb_xid_total")
        .map(|s| s.1.as_str())
        .collect();
    assert!(kinds.iter().all(|k| k.contains("Counter")), "{kinds:?}");
    assert_eq!(
        value(
            &parsed,
            "gpukb_kernel_event_total",
            &[("kind", "fallen_off_bus"), ("gpu", "0000:b3:00.0")]
        ),
        Some(1.0),
        "the three-record report counts once"
    );
    assert_eq!(
        value(
            &parsed,
            "gpukb_kernel_event_total",
            &[("kind", "gsp_timeout"), ("gpu", "GPU6")]
        ),
        Some(1.0)
    );
    // Telemetry that cannot be read is said so, never exported as 0.
    assert_eq!(
        value(
            &parsed,
            "gpukb_metric_supported",
            &[("metric", "telemetry")]
        ),
        Some(0.0)
    );
    assert!(!parsed.iter().any(|s| s.0 == "gpukb_gpu_temp"));
    // Kernel events link to the KB's Xid table.
    let h = a.store.history(None).unwrap();
    let xid79 = h
        .events
        .iter()
        .find(|e| e.kind == "kernel" && e.what.ends_with(".79"))
        .expect("xid 79 event");
    assert!(xid79.meaning.starts_with("Xid 79"), "{}", xid79.meaning);
}

#[test]
fn ring_buffer_reread_does_not_recount_and_a_new_boot_starts_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let kmsg = fixtures().join("../../cli/monitor/tests/fixtures/kmsg-xid.txt");
    let first = agent_on(
        "healthy/h200-with-pci",
        config(&db, KernelLogSource::File(kmsg.clone())),
    )
    .stack_pass()
    .unwrap();
    assert_eq!(
        first.new_kernel_events.len(),
        10,
        "{:#?}",
        first.new_kernel_events
    );
    // The agent restarts and reads the same ring buffer: nothing new.
    let mut again = agent_on(
        "healthy/h200-with-pci",
        config(&db, KernelLogSource::File(kmsg.clone())),
    );
    assert!(again.stack_pass().unwrap().new_kernel_events.is_empty());
    let c = again.kernel_counts().unwrap();
    let x13 = c.iter().find(|k| k.code == Some(13)).unwrap();
    assert_eq!(x13.count, 3);
    assert!(x13.first_seen <= x13.last_seen);
    // After a reboot the counts of the new boot start empty.
    let mut cfg = config(&db, KernelLogSource::Off);
    cfg.boot_id = Some("boot-b".into());
    let rebooted = agent_on("healthy/h200-with-pci", cfg.clone());
    assert!(rebooted.kernel_counts().unwrap().is_empty());
    // The same Xid again after that reboot is escalated: a reboot did not clear it.
    cfg.kernel_log = KernelLogSource::File(kmsg);
    let mut again = agent_on("healthy/h200-with-pci", cfg);
    let p = again.stack_pass().unwrap();
    assert_eq!(
        p.new_kernel_events.len(),
        10,
        "a new boot counts its own ring buffer"
    );
    let h = again.store.history(None).unwrap();
    let last79 = h
        .events
        .iter()
        .rev()
        .find(|e| e.kind == "kernel" && e.what.ends_with(".79"))
        .unwrap();
    assert!(
        last79.meaning.starts_with("seen in 1 earlier boot"),
        "{}",
        last79.meaning
    );
}

#[test]
fn label_values_and_help_are_escaped() {
    let mut e = Exposition::default();
    let nasty = "a \"quoted\" back\\slash\nnew line";
    e.family(
        "gpukb_test_info",
        "Help with a back\\slash\nand a newline.",
        MetricType::Gauge,
    )
    .add(&[("reason", nasty), ("gpu", "0")], 1.0)
    .add(&[("reason", "plain"), ("gpu", "1")], f64::NAN);
    e.family("gpukb_test_total", "A counter.", MetricType::Counter)
        .add(&[], 12.5);
    e.family("gpukb_empty", "No samples: left out.", MetricType::Gauge);
    let text = e.render();
    assert!(!text.contains("gpukb_empty"));
    let p = parse(&text);
    let reason = p
        .iter()
        .find(|s| s.2.get("gpu").map(String::as_str) == Some("0"))
        .unwrap();
    assert_eq!(reason.2["reason"], nasty);
    assert!(p
        .iter()
        .find(|s| s.2.get("gpu").map(String::as_str) == Some("1"))
        .unwrap()
        .3
        .is_nan());
    assert_eq!(value(&p, "gpukb_test_total", &[]), Some(12.5));
    assert_eq!(metrics::format_value(f64::INFINITY), "+Inf");
}

#[test]
fn textfile_is_replaced_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpukb.prom");
    metrics::write_textfile(&path, "# HELP gpukb_x x\n# TYPE gpukb_x gauge\ngpukb_x 1\n").unwrap();
    metrics::write_textfile(&path, "# HELP gpukb_x x\n# TYPE gpukb_x gauge\ngpukb_x 2\n").unwrap();
    assert_eq!(
        value(
            &parse(&std::fs::read_to_string(&path).unwrap()),
            "gpukb_x",
            &[]
        ),
        Some(2.0)
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    let err = metrics::write_textfile(&dir.path().join("missing/dir/x.prom"), "x").unwrap_err();
    assert!(err.to_string().contains("cannot write"), "{err}");
}

#[test]
fn retention_by_age_and_size_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let mut a = agent_on("healthy/h200-with-pci", config(&db, KernelLogSource::Off));
    let base = a.stack_pass().unwrap().snapshot;
    let day = 86400;
    for i in 0..20 {
        let mut s = base.clone();
        s.at = 1_700_000_000 + i * day;
        // Make every fingerprint distinct so each snapshot has its own blob.
        s.fingerprint.env.push(gpukb_facts::fingerprint::EnvVar {
            name: "CUDA_VISIBLE_DEVICES".into(),
            value: i.to_string(),
        });
        a.store.record(&s, &[]).unwrap();
    }
    let now = 1_700_000_000 + 19 * day;
    let pruned = a
        .store
        .retain(now, Duration::from_secs(10 * day as u64), 64 << 20)
        .unwrap();
    assert!(pruned.snapshots >= 9, "{pruned:?}");
    let left = a.store.history(None).unwrap().snapshots;
    assert!(left.iter().all(|s| s.at >= now - 10 * day), "{left:?}");
    let used = a.store.used_bytes().unwrap();
    a.store
        .retain(now, Duration::from_secs(3650 * day as u64), used / 4)
        .unwrap();
    let left2 = a.store.history(None).unwrap().snapshots;
    assert!(left2.len() < left.len() && !left2.is_empty());
    assert_eq!(
        left2.last().unwrap().id,
        left.last().unwrap().id,
        "the newest stays"
    );
    assert!(a.store.used_bytes().unwrap() <= used / 4 || left2.len() == 1);
}

#[test]
fn jetson_telemetry_from_sysfs_without_nvml() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixtures().join("jetson-orin-nx-jp62"))
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    // Add what a board exposes (values written here, layout as the kernel's
    // thermal and ina3221 hwmon drivers lay it out).
    let w = |p: &str, v: &str| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, v).unwrap();
    };
    w("sys/class/thermal/thermal_zone0/type", "gpu-thermal\n");
    w("sys/class/thermal/thermal_zone0/temp", "47500\n");
    let hw = "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3";
    w(&format!("{hw}/in1_label"), "VDD_IN\n");
    w(&format!("{hw}/in1_input"), "5000\n");
    w(&format!("{hw}/curr1_input"), "1200\n");
    let db = dir.path().join("agent.db");
    let host = Arc::new(Host::root_dir(&root));
    let mut a = Agent::open(config(&db, KernelLogSource::Off), host).unwrap();
    let p = a.stack_pass().unwrap();
    assert!(p.snapshot.fingerprint.jetson.is_found());
    let mut sampler = a.sampler();
    let t = a.sample(&mut sampler, Some(&p.snapshot));
    let text = a
        .exposition(Some(&p.snapshot), Some(&t), Ok(()), None)
        .unwrap();
    let parsed = parse(&text);
    // devfreq load is in tenths of a percent: 37 → 3.7 %.
    assert_eq!(value(&parsed, "gpukb_gpu_util", &[("gpu", "0")]), Some(3.7));
    assert_eq!(
        value(&parsed, "gpukb_sm_clock", &[("gpu", "0")]),
        Some(306.0)
    );
    assert_eq!(
        value(
            &parsed,
            "gpukb_thermal_zone_temp",
            &[("zone", "gpu-thermal")]
        ),
        Some(47.5)
    );
    assert_eq!(
        value(&parsed, "gpukb_power_rail_watts", &[("rail", "VDD_IN")]),
        Some(6.0)
    );
    assert_eq!(value(&parsed, "gpukb_nvpmodel_mode", &[]), Some(2.0));
    // What Tegra cannot give is declared, not exported as 0.
    assert_eq!(
        value(
            &parsed,
            "gpukb_metric_supported",
            &[("metric", "gpukb_fb_used"), ("gpu", "0")]
        ),
        Some(0.0)
    );
    assert!(!parsed.iter().any(|s| s.0 == "gpukb_fb_used"));
}

#[test]
fn live_nvml_sampler_degrades_with_a_reason() {
    // On a machine without the driver (CI) NVML cannot be loaded: every sample
    // says why, the exposition declares telemetry unsupported.
    let mut s = gpukb_monitor::telemetry::NvmlSampler::open(Duration::from_secs(5));
    let t = s.sample();
    match &t.gpus {
        Err(why) => {
            assert!(why.starts_with("NVML"), "{why}");
            let e = metrics::build(&metrics::ExpositionInputs {
                version: "t",
                kb_as_of: "t",
                snapshot: None,
                telemetry: Some(&t),
                kernel: &[],
                stack_changes: &[],
                kernel_log: Ok(()),
                canary: None,
                hardware: None,
            });
            let p = parse(&e.render());
            assert_eq!(
                value(
                    &p,
                    "gpukb_metric_supported",
                    &[("metric", "telemetry"), ("reason", why)]
                ),
                Some(0.0)
            );
        }
        Ok(gpus) => {
            // A GPU host: every reading is a value or says why not.
            for g in gpus {
                assert!(!g.readings.is_empty() || g.unresponsive.is_some());
            }
        }
    }
    s.release("test");
    assert!(!s.is_open());
    assert!(s.sample().gpus.is_err());
}
