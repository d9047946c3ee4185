//! `gpukb kb eval`: strict and `same_as` scores, unknown labels, JSON, and cases that name
//! the machine they came from (a capture replayed like `search --replay`).
#![allow(clippy::disallowed_methods)] // tests write labelled files and run the binary

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpukb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpukb"))
}

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/broken")
        .join(name)
}

/// Writes `cases` (one JSON object each) to `dir/cases.jsonl`.
fn write_cases(dir: &Path, cases: &[serde_json::Value]) -> PathBuf {
    let path = dir.join("cases.jsonl");
    let text: Vec<String> = cases.iter().map(|c| c.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

fn eval_json(file: &Path) -> (Output, serde_json::Value) {
    let out = gpukb()
        .args(["kb", "eval", "--json"])
        .arg(file)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, v)
}

const CDI: &str = "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all";

#[test]
fn same_as_counts_a_declared_equivalent_and_strict_does_not() {
    let dir = tempfile::tempdir().unwrap();
    // Our entry for this text has category cdi_spec_unresolvable, which the category
    // container_cdi_spec_missing lists in its same_as.
    let file = write_cases(
        dir.path(),
        &[
            serde_json::json!({"id": "a", "error": CDI, "root_cause": "container_cdi_spec_missing"}),
            serde_json::json!({"id": "b", "error": CDI, "root_cause": "cdi_spec_unresolvable"}),
            serde_json::json!({"id": "c", "error": CDI, "root_cause": "oom"}),
        ],
    );
    let (out, v) = eval_json(&file);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let k = &v["report"]["overall"];
    assert_eq!(k["n"], 3);
    assert_eq!(k["top1"], 1, "{v}");
    assert_eq!(k["top1_same_as"], 2, "{v}");
    let per = &v["report"]["per_category"]["container_cdi_spec_missing"];
    assert_eq!(
        (per["top1"].as_u64(), per["top1_same_as"].as_u64()),
        (Some(0), Some(1))
    );
    // Both strict misses are listed, by expected category, and say whether same_as saved them.
    let misses = v["report"]["misses"].as_array().unwrap();
    let ids: Vec<&str> = misses.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(misses[0]["top1_same_as"], true);
    assert_eq!(misses[1]["top1_same_as"], false);
    // Calibration: all three cases share one top-1 confidence c, right 1 of 3 times
    // strictly and 2 of 3 counting same_as, so ECE = |c - 1/3| and |c - 2/3|.
    let cal = &v["report"]["calibration"];
    let c = cal["mean_confidence"].as_f64().unwrap();
    assert!(c > 0.0 && c <= 1.0, "{cal}");
    assert!(
        (cal["ece"].as_f64().unwrap() - (c - 1.0 / 3.0).abs()).abs() < 1e-9,
        "{cal}"
    );
    assert!(
        (cal["ece_same_as"].as_f64().unwrap() - (c - 2.0 / 3.0).abs()).abs() < 1e-9,
        "{cal}"
    );
    assert_eq!(cal["bins"].as_array().unwrap().len(), 1, "{cal}");
}

#[test]
fn text_report_prints_strict_and_same_as_side_by_side_with_misses_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_cases(
        dir.path(),
        &[serde_json::json!({"id": "a", "error": CDI, "root_cause": "container_cdi_spec_missing"})],
    );
    let out = gpukb().args(["kb", "eval"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("strict    top-1   0.0%"), "{text}");
    assert!(text.contains("same_as   top-1 100.0%"), "{text}");
    assert!(text.contains("ECE over 10 bins"), "{text}");
    assert!(text.contains("misses (strict top-1 category wrong), by expected category:"));
    assert!(
        text.contains("  container_cdi_spec_missing\n    a (same_as top-1)"),
        "{text}"
    );
}

#[test]
fn an_unknown_label_is_a_one_line_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_cases(
        dir.path(),
        &[
            serde_json::json!({"id": "ok", "error": CDI, "root_cause": "oom"}),
            serde_json::json!({"id": "bad", "error": CDI, "root_cause": "no_such_cause_anywhere"}),
        ],
    );
    let (out, _) = eval_json(&file);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("bad") && err.contains("no_such_cause_anywhere"),
        "{err}"
    );
}

#[test]
fn a_case_with_a_machine_is_also_ranked_with_that_machines_facts() {
    let dir = tempfile::tempdir().unwrap();
    // cuInit's status alone: text ranks "no GPU" first, the capture shows CVD hides them
    let text = "cuInit failed: CUDA_ERROR_NO_DEVICE";
    // A relative machine path is relative to the JSONL file: link the fixture next to it.
    std::os::unix::fs::symlink(capture("cuda-visible-devices-empty"), dir.path().join("m1"))
        .unwrap();
    let file = write_cases(
        dir.path(),
        &[
            serde_json::json!({"id": "m", "error": text, "root_cause": "cuda_visible_devices_wrong", "machine": "m1"}),
            serde_json::json!({"id": "t", "error": text, "root_cause": "cuda_visible_devices_wrong"}),
        ],
    );
    let (out, v) = eval_json(&file);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = &v["report"]["machine"];
    assert_eq!(m["n"], 1, "only the case with a machine counts: {v}");
    assert_eq!(m["machine_top1"], 1, "{v}");
    let case = &v["report"]["machine_cases"][0];
    assert_eq!(case["id"], "m");
    assert_eq!(
        case["machine_top1"]["id"],
        "cuda-visible-devices-hides-gpus"
    );
    assert_eq!(case["machine_right"], true);
    // Text alone ranks another cause first; the machine's facts change the answer.
    assert_ne!(case["text_top1"]["id"], case["machine_top1"]["id"], "{v}");
    assert_eq!(m["text_top1"], 0, "{v}");

    let out = gpukb().args(["kb", "eval"]).arg(&file).output().unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains(
            "1 case(s) with a machine: top-1 text only 0.0% (0), with the machine 100.0% (1)"
        ),
        "{human}"
    );
}

#[test]
fn a_machine_that_is_not_a_capture_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_cases(
        dir.path(),
        &[
            serde_json::json!({"id": "m", "error": CDI, "root_cause": "oom", "machine": "missing-dir"}),
        ],
    );
    let (out, _) = eval_json(&file);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("case m") && err.contains("missing-dir"),
        "{err}"
    );
}
