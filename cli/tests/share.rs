//! Sharing a machine's facts (issue 13 §1–2): a capture with planted private
//! values (hostname, machine id, container id, user paths, GPU UUID and
//! serials, tokens and URL credentials, one of them inside the binary
//! `ld.so.cache`), built from the recorded H200 fixture. None of them appears
//! in `gpukb report` or in `gpukb capture --redact`, the redacted capture
//! replays to the redacted fingerprint and to the same doctor verdict, and
//! without redaction they are there (so the plant reaches the output).
#![allow(clippy::disallowed_methods)] // builds fixtures and runs the binary

use std::path::Path;
use std::process::Command;

/// Private values planted, each of which must disappear.
const PLANTED: &[&str] = &[
    "dgx-secret-node07",
    "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    "4f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8",
    "1423521040987",
    "1652823054321",
    "alice",
    "llm-secret-proj",
    "lib-priv1",
    "hf_PlantedSecretToken123456",
    "hunter2pass",
    "203.0.113.77",
    // The recorded H200's real GPU UUID (in the NVML answer).
    "e3344502-c9fc-0416-7091-4a6968e9d3e8",
];

fn gpukb(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tests/fixtures/<name>` in this repository.
fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn plant_file(dir: &Path, journal: &mut serde_json::Value, path: &str, bytes: &[u8]) {
    let full = dir.join("root").join(path.trim_start_matches('/'));
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
    journal["files"][path] = serde_json::json!({ "ok": bytes.len() });
}

/// The H200 fixture with private values planted in files, env, NVML and ld.so.cache.
fn planted(dir: &Path) {
    copy_dir(&fixture("healthy/h200-live-2026-12-01"), dir);
    let mut j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("capture.json")).unwrap()).unwrap();
    plant_file(
        dir,
        &mut j,
        "/etc/hostname",
        b"dgx-secret-node07.corp.example.com\n",
    );
    plant_file(
        dir,
        &mut j,
        "/etc/machine-id",
        b"0a1b2c3d4e5f60718293a4b5c6d7e8f9\n",
    );
    plant_file(
        dir,
        &mut j,
        "/proc/1/cgroup",
        b"0::/docker/4f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8\n",
    );
    plant_file(
        dir,
        &mut j,
        "/proc/device-tree/serial-number",
        b"1423521040987\0",
    );
    // A library under a home directory inside the binary cache (same length).
    let cache_path = dir.join("root/etc/ld.so.cache");
    let mut cache = std::fs::read(&cache_path).unwrap();
    let (from, to) = (
        b"/lib/x86_64-linux-gnu/libzstd.so.1",
        b"/home/alice/lib-priv1/libzstd.so.1",
    );
    let at = cache
        .windows(from.len())
        .position(|w| w == from)
        .expect("libzstd in the fixture's ld.so.cache");
    cache[at..at + from.len()].copy_from_slice(to);
    std::fs::write(&cache_path, &cache).unwrap();
    let env = &mut j["env"];
    env["HOME"] = "/home/alice".into();
    env["VIRTUAL_ENV"] = "/home/alice/llm-secret-proj/.venv".into();
    let path = env["PATH"].as_str().unwrap().to_string();
    env["PATH"] = format!("/home/alice/llm-secret-proj/.venv/bin:{path}").into();
    env["NCCL_HF_TOKEN"] = "hf_PlantedSecretToken123456".into();
    env["NCCL_PROXY_URL"] = "https://alice:hunter2pass@proxy.corp.example.com/".into();
    env["NCCL_SOCKET_ADDR"] = "203.0.113.77".into();
    j["answers"]["nvml"]["ok"]["gpus"][0]["serial"] = "1652823054321".into();
    std::fs::write(
        dir.join("capture.json"),
        serde_json::to_string_pretty(&j).unwrap(),
    )
    .unwrap();
}

/// Every planted value found in `bytes`.
fn leaks(bytes: &[u8]) -> Vec<&'static str> {
    PLANTED
        .iter()
        .copied()
        .filter(|p| bytes.windows(p.len()).any(|w| w == p.as_bytes()))
        .collect()
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn diagnosis(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = gpukb(args);
    assert!(code == 0 || code == 1, "{args:?}: {code} {err}");
    serde_json::from_slice(&out).unwrap()
}

/// Verdict, root causes and per-layer status: what "the same verdict" means.
fn verdict(d: &serde_json::Value) -> serde_json::Value {
    let layers: Vec<_> = d["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["layer"].clone(), l["status"].clone()))
        .collect();
    let roots: Vec<_> = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["root_cause"] == true)
        .map(|f| f["id"].clone())
        .collect();
    serde_json::json!({ "verdict": d["verdict"], "layers": layers, "roots": roots })
}

#[test]
fn nothing_planted_survives_report_or_capture_redact_and_the_verdict_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let plant = tmp.path().join("planted");
    planted(&plant);
    let plant_s = plant.to_str().unwrap();

    // The plant reaches the output when redaction is off.
    let (code, raw, err) = gpukb(&["report", "--replay", plant_s, "--no-redact"]);
    assert_eq!(code, 0, "{err}");
    let seen = leaks(&raw);
    for must in [
        "alice",
        "llm-secret-proj",
        "hf_PlantedSecretToken123456",
        "hunter2pass",
        "e3344502-c9fc-0416-7091-4a6968e9d3e8",
    ] {
        assert!(
            seen.contains(&must),
            "{must} not in the unredacted report: the plant missed"
        );
    }

    // The report, redacted by default.
    let (code, report, err) = gpukb(&["report", "--replay", plant_s]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(leaks(&report), Vec::<&str>::new(), "leaked into report");
    let report = String::from_utf8(report).unwrap();
    assert!(report.chars().count() <= 60_000);
    assert!(report.contains("#### Doctor: ✓ ok"), "{report}");
    assert!(report.contains("<details><summary>Fingerprint (JSON)</summary>"));
    assert!(report.contains("knowledge base:"));
    // Tokens are stable: the same machine, the same report.
    let (_, again, _) = gpukb(&["report", "--replay", plant_s]);
    assert_eq!(String::from_utf8(again).unwrap(), report);

    // capture --redact: every file of the capture is clean.
    let red = tmp.path().join("redacted");
    let red_s = red.to_str().unwrap();
    let (code, out, err) = gpukb(&["capture", "--redact", "--from", plant_s, "-o", red_s]);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&out).contains("pseudonymised"));
    let mut all = Vec::new();
    files(&red, &mut all);
    assert!(all.len() > 20, "{all:?}");
    for f in &all {
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(
            leaks(&bytes),
            Vec::<&str>::new(),
            "leaked into {}",
            f.display()
        );
        assert!(!leaks(f.to_str().unwrap().as_bytes()).contains(&"alice"));
    }
    // Binary files keep their length.
    assert_eq!(
        std::fs::metadata(red.join("root/etc/ld.so.cache"))
            .unwrap()
            .len(),
        std::fs::metadata(plant.join("root/etc/ld.so.cache"))
            .unwrap()
            .len()
    );
    let journal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(red.join("capture.json")).unwrap()).unwrap();
    assert!(journal["redacted"].is_string());

    // It replays to the same verdict.
    let before = diagnosis(&["doctor", "--replay", plant_s, "--json"]);
    let after = diagnosis(&["doctor", "--replay", red_s, "--json"]);
    assert_eq!(verdict(&before), verdict(&after));
    assert_eq!(before["verdict"], "ok");

    // ... and to the redacted fingerprint: what the library makes of the original.
    let (_, fp_before, _) = gpukb(&["fingerprint", "--replay", plant_s, "--json"]);
    let (_, fp_after, _) = gpukb(&["fingerprint", "--replay", red_s, "--json"]);
    let data = gpukb_agent::host::CaptureData::read(&plant).unwrap();
    let mut learner = gpukb_agent::redact::Learner::new();
    learner.capture(&data);
    let redaction = learner.finish();
    let fp_before: serde_json::Value = serde_json::from_slice(&fp_before).unwrap();
    let fp_after: serde_json::Value = serde_json::from_slice(&fp_after).unwrap();
    assert_eq!(redaction.json(&fp_before), fp_after);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(red.join("fingerprint.json")).unwrap()).unwrap();
    assert_eq!(written, fp_after);

    // Redacting again changes nothing more; the report of the redacted capture is clean too.
    let (_, report2, _) = gpukb(&["report", "--replay", red_s]);
    assert_eq!(leaks(&report2), Vec::<&str>::new());
}

#[test]
fn report_is_cut_under_the_limit_and_whole_with_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("report.md");
    let fixture = fixture("healthy/h200-live-2026-12-01");
    let fixture = fixture.to_str().unwrap();
    let (code, out, err) = gpukb(&["report", "--replay", fixture, "-o", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&out).starts_with("Wrote the report ("));
    let whole = std::fs::read_to_string(&file).unwrap();
    assert!(!whole.contains("cut here") && !whole.contains("gpukb:body"));
    let (_, stdout, _) = gpukb(&["report", "--replay", fixture]);
    let stdout = String::from_utf8(stdout).unwrap();
    if whole.chars().count() <= 60_000 {
        assert_eq!(stdout, whole);
    }
    // The cutting itself, at a limit this fixture exceeds.
    let cut = gpukb_cli::issue_report::fit(&whole, 20_000);
    assert!(cut.chars().count() <= 20_000, "{}", cut.chars().count());
    assert!(cut.contains("more characters cut here") && cut.contains("-o FILE"));
    assert!(cut.contains("#### Doctor:"));
}

/// Unrelated text around a 2-letter hostname `vm`, planted as a file: redaction must leave
/// it as it is (no substring or bare-word replacement).
const NOT_A_HOSTNAME: &[u8] =
    b"options nvidia-uvm uvm_disable_hmm=1\n# kvm vmx --vm VM\nvm.overcommit_memory = 1\n/proc/sys/vm/swappiness\nvm\n";

/// Occurrences of `vm` as a word of its own (not inside `nvidia-uvm`, `kvm`, `vmx`).
fn bare_vm(bytes: &[u8]) -> usize {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    (0..bytes.len().saturating_sub(1))
        .filter(|&i| {
            &bytes[i..i + 2] == b"vm"
                && (i == 0 || !word(bytes[i - 1]))
                && (i + 2 == bytes.len() || !word(bytes[i + 2]))
        })
        .count()
}

/// The H200 fixture on a machine called `vm`: the hostname files, /etc/hosts, a syslog
/// line, `HOSTNAME`, NCCL's bootstrap address (recorded, so it reaches the fingerprint and
/// the report) and `uname -a`.
fn planted_short_host(dir: &Path) {
    copy_dir(&fixture("healthy/h200-live-2026-12-01"), dir);
    let mut j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("capture.json")).unwrap()).unwrap();
    for (path, bytes) in [
        ("/etc/hostname", &b"vm\n"[..]),
        ("/proc/sys/kernel/hostname", b"vm\n"),
        ("/etc/hosts", b"127.0.0.1 localhost\n127.0.1.1 vm\n::1 ip6-localhost\n"),
        (
            "/var/log/syslog",
            b"Dec  1 10:00:00 vm kernel: nvidia-uvm: Loaded the UVM driver, major device number 510.\n",
        ),
        ("/etc/modprobe.d/planted.conf", NOT_A_HOSTNAME),
    ] {
        plant_file(dir, &mut j, path, bytes);
    }
    j["env"]["HOSTNAME"] = "vm".into();
    j["env"]["NCCL_COMM_ID"] = "vm:52000".into();
    j["commands"]["uname -a"] = serde_json::json!({"ok": {"program": "/usr/bin/uname",
        "status": 0, "stdout": "Linux vm 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n",
        "stderr": ""}});
    std::fs::write(
        dir.join("capture.json"),
        serde_json::to_string_pretty(&j).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_two_letter_hostname_is_redacted_where_it_is_one_and_nowhere_else() {
    let tmp = tempfile::tempdir().unwrap();
    let plant = tmp.path().join("planted-short-host");
    planted_short_host(&plant);
    let plant_s = plant.to_str().unwrap();
    // `vm.overcommit_memory`, `/proc/sys/vm/`, and a bare line: words, not hostnames.
    assert_eq!(bare_vm(NOT_A_HOSTNAME), 3);

    // The plant reaches the report when redaction is off.
    let (code, raw, err) = gpukb(&["report", "--replay", plant_s, "--no-redact"]);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&raw).contains("vm:52000"));

    let (code, report, err) = gpukb(&["report", "--replay", plant_s]);
    assert_eq!(code, 0, "{err}");
    let report = String::from_utf8(report).unwrap();
    assert_eq!(bare_vm(report.as_bytes()), 0, "{report}");
    assert!(!report.contains("vm:52000"));

    let red = tmp.path().join("redacted");
    let red_s = red.to_str().unwrap();
    let (code, _, err) = gpukb(&["capture", "--redact", "--from", plant_s, "-o", red_s]);
    assert_eq!(code, 0, "{err}");
    let mut all = Vec::new();
    files(&red, &mut all);
    let unrelated = red.join("root/etc/modprobe.d/planted.conf");
    assert_eq!(std::fs::read(&unrelated).unwrap(), NOT_A_HOSTNAME);
    for f in all.iter().filter(|f| **f != unrelated) {
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(bare_vm(&bytes), 0, "vm left in {}", f.display());
    }
    let hostname = std::fs::read_to_string(red.join("root/etc/hostname")).unwrap();
    assert_eq!(hostname.len(), 3);
    assert_ne!(hostname, "vm\n");
    // Consistent: the same token in every file.
    let token = hostname.trim();
    for (file, line) in [
        ("root/proc/sys/kernel/hostname", format!("{token}\n")),
        ("root/etc/hosts", format!("127.0.1.1 {token}\n")),
        (
            "root/var/log/syslog",
            format!("00 {token} kernel: nvidia-uvm: Loaded"),
        ),
    ] {
        let text = std::fs::read_to_string(red.join(file)).unwrap();
        assert!(text.contains(&line), "{file}: {text}");
    }
    let journal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(red.join("capture.json")).unwrap()).unwrap();
    assert_eq!(journal["env"]["HOSTNAME"], token);
    assert_eq!(journal["env"]["NCCL_COMM_ID"], format!("{token}:52000"));

    // The redacted capture replays to the same verdict.
    let before = diagnosis(&["doctor", "--replay", plant_s, "--json"]);
    let after = diagnosis(&["doctor", "--replay", red_s, "--json"]);
    assert_eq!(verdict(&before), verdict(&after));
}
