//! Whole-output snapshots of what users read: for every fixture under
//! `tests/fixtures/{broken,healthy}`, the stdout and exit code of `gpukb
//! doctor`, `search` (the paste a user of that machine typically has, from
//! `tests/eval/machines.jsonl`, with the machine replayed), `plan`,
//! `fingerprint` and `report` (run from the repository root on the fixture's
//! relative path, as a user would, `NO_COLOR=1`) must equal
//! `cli/tests/snapshots/<command>/<group>-<name>.txt` byte for byte, so a
//! change to what users read shows in review. On a difference the test prints
//! a line diff; `GPUKB_BLESS=1 cargo test -p gpukb --test doctor_snapshots`
//! rewrites the snapshots (review the diff first).
#![allow(clippy::disallowed_methods)] // reads fixture trees and snapshots, runs the binary

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn snapshot_dir(command: &str) -> PathBuf {
    repo().join("cli/tests/snapshots").join(command)
}

/// The paste a user of each broken machine typically has (`id` → `error`).
fn pastes() -> std::collections::HashMap<String, String> {
    let t = std::fs::read_to_string(repo().join("tests/eval/machines.jsonl")).unwrap();
    t.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            Some((
                v["id"].as_str()?.to_string(),
                v["error"].as_str()?.to_string(),
            ))
        })
        .collect()
}

/// The paste searched on a fixture with none of its own.
const DEFAULT_PASTE: &str =
    "RuntimeError: CUDA error: no kernel image is available for execution on the device";

/// Every fixture directory of `tests/fixtures/{broken,healthy}`, as
/// (snapshot name, path relative to the repository root), sorted.
fn fixtures() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for group in ["broken", "healthy"] {
        let dir = repo().join("tests/fixtures").join(group);
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                let name = e.file_name().to_string_lossy().into_owned();
                v.push((
                    format!("{group}-{name}"),
                    format!("tests/fixtures/{group}/{name}"),
                ));
            }
        }
    }
    v.sort();
    v
}

/// The input flag the fixture's `EXPECT.toml` names (`--replay` without one).
fn input_flag(rel: &str) -> &'static str {
    let expect = repo().join(rel).join("EXPECT.toml");
    let input = std::fs::read_to_string(expect)
        .ok()
        .and_then(|t| toml::from_str::<toml::Value>(&t).ok())
        .and_then(|v| v.get("input").and_then(|i| i.as_str()).map(str::to_string));
    match input.as_deref() {
        Some("root") => "--root",
        _ => "--replay",
    }
}

/// One command's stdout and exit code on one fixture, with the repository's
/// absolute path (should any appear) replaced by `<repo>`.
fn output_of(command: &str, name: &str, rel: &str) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpukb"));
    cmd.current_dir(repo()).env("NO_COLOR", "1").arg(command);
    match command {
        "search" => {
            let fixture = name.split_once('-').map_or(name, |(_, n)| n);
            let paste = pastes()
                .remove(fixture)
                .unwrap_or_else(|| DEFAULT_PASTE.to_string());
            cmd.args([input_flag(rel), rel, "--", &paste]);
        }
        _ => {
            cmd.args([input_flag(rel), rel]);
        }
    }
    let out = cmd.output().unwrap();
    let root = repo().display().to_string();
    let text = String::from_utf8_lossy(&out.stdout).replace(&root, "<repo>");
    // A root directory's facts are taken now: the time is the one thing that
    // changes between runs (captures carry their own).
    let now = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(now").unwrap();
    let text = now.replace_all(&text, "<now> (now");
    // The KB's entry count changes with every new entry, not with what this
    // output says about the machine.
    let entries = regex::Regex::new(r"knowledge base: \d+ entries").unwrap();
    let text = entries.replace_all(&text, "knowledge base: <n> entries");
    format!("{text}[exit {}]\n", out.status.code().unwrap_or(-1))
}

/// A line diff of `want` → `got` (longest common subsequence): `-` lines only
/// in the snapshot, `+` lines only in the output.
fn diff(want: &str, got: &str) -> String {
    let a: Vec<&str> = want.lines().collect();
    let b: Vec<&str> = got.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        } else {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        }
    }
    out
}

/// Checks (or with `GPUKB_BLESS`, writes) one command's snapshots; the
/// fixtures are run on a few threads.
fn check_snapshots(command: &str) {
    let bless = std::env::var_os("GPUKB_BLESS").is_some();
    let dir = snapshot_dir(command);
    let all = fixtures();
    assert!(all.len() >= 30, "only {} fixtures", all.len());
    let outputs: Vec<(String, String, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = all
            .chunks(all.len().div_ceil(4))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(name, rel)| {
                            (name.clone(), rel.clone(), output_of(command, name, rel))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut stale = Vec::new();
    for (name, rel, got) in &outputs {
        let path = dir.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if &want == got => {}
            Ok(want) => stale.push(format!("{name} ({rel}):\n{}", diff(&want, got))),
            Err(e) => stale.push(format!("{name}: no snapshot {} ({e})", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "gpukb {command}'s text differs from its snapshot for {} fixture(s); if the change is meant, run GPUKB_BLESS=1 cargo test -p gpukb --test doctor_snapshots\n\n{}",
        stale.len(),
        stale.join("\n")
    );
    // No orphan: every snapshot is of a fixture that exists.
    for e in std::fs::read_dir(&dir).unwrap() {
        let file = e.unwrap().file_name().to_string_lossy().into_owned();
        let stem = file.strip_suffix(".txt").unwrap_or(&file);
        assert!(
            all.iter().any(|(n, _)| n == stem),
            "cli/tests/snapshots/{command}/{file} is of no fixture in tests/fixtures/{{broken,healthy}}"
        );
    }
}

#[test]
fn doctor_text_of_every_fixture_is_its_snapshot() {
    check_snapshots("doctor");
}

#[test]
fn search_text_of_every_fixture_is_its_snapshot() {
    check_snapshots("search");
}

#[test]
fn plan_text_of_every_fixture_is_its_snapshot() {
    check_snapshots("plan");
}

#[test]
fn fingerprint_text_of_every_fixture_is_its_snapshot() {
    check_snapshots("fingerprint");
}

#[test]
fn report_of_every_fixture_is_its_snapshot() {
    check_snapshots("report");
}

#[test]
fn the_diff_shows_what_changed() {
    assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "-b\n+B\n");
    assert_eq!(diff("a\n", "a\nb\n"), "+b\n");
    assert_eq!(diff("a\nb\n", "b\n"), "-a\n");
}
