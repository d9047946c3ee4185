//! Whole-output snapshots of `gpukb doctor`'s text report: for every fixture
//! under `tests/fixtures/{broken,healthy}`, the binary's stdout and exit code
//! (run from the repository root on the fixture's relative path, as a user
//! would, `NO_COLOR=1`) must equal `cli/tests/snapshots/doctor/<group>-<name>.txt`
//! byte for byte, so a change to what users read shows in review. On a
//! difference the test prints a line diff; `GPUKB_BLESS=1 cargo test -p gpukb
//! --test doctor_snapshots` rewrites the snapshots (review the diff first).
#![allow(clippy::disallowed_methods)] // reads fixture trees and snapshots, runs the binary

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn snapshot_dir() -> PathBuf {
    repo().join("cli/tests/snapshots/doctor")
}

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

/// `gpukb doctor`'s stdout and exit code on one fixture, with the repository's
/// absolute path (should any appear) replaced by `<repo>`.
fn doctor_text(rel: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .current_dir(repo())
        .args(["doctor", input_flag(rel), rel])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let root = repo().display().to_string();
    let text = String::from_utf8_lossy(&out.stdout).replace(&root, "<repo>");
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

#[test]
fn doctor_text_of_every_fixture_is_its_snapshot() {
    let bless = std::env::var_os("GPUKB_BLESS").is_some();
    let dir = snapshot_dir();
    let all = fixtures();
    assert!(all.len() >= 30, "only {} fixtures", all.len());
    let mut stale = Vec::new();
    for (name, rel) in &all {
        let got = doctor_text(rel);
        let path = dir.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => stale.push(format!("{name} ({rel}):\n{}", diff(&want, &got))),
            Err(e) => stale.push(format!("{name}: no snapshot {} ({e})", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "gpukb doctor's text differs from its snapshot for {} fixture(s); if the change is meant, run GPUKB_BLESS=1 cargo test -p gpukb --test doctor_snapshots\n\n{}",
        stale.len(),
        stale.join("\n")
    );
    // No orphan: every snapshot is of a fixture that exists.
    for e in std::fs::read_dir(&dir).unwrap() {
        let file = e.unwrap().file_name().to_string_lossy().into_owned();
        let stem = file.strip_suffix(".txt").unwrap_or(&file);
        assert!(
            all.iter().any(|(n, _)| n == stem),
            "cli/tests/snapshots/doctor/{file} is of no fixture in tests/fixtures/{{broken,healthy}}"
        );
    }
}

#[test]
fn the_diff_shows_what_changed() {
    assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "-b\n+B\n");
    assert_eq!(diff("a\n", "a\nb\n"), "+b\n");
    assert_eq!(diff("a\nb\n", "b\n"), "-a\n");
}
