//! A harm review as a test (issue 25 §7): one table (`gpukb_doctor::effect`)
//! maps each command gpukb prints to its effect on a machine: a driver or
//! module package installed or removed, a module loaded or unloaded, a
//! reboot, a MOK change, an install into a Python env, ... Every command
//! string in `kb/entries` and every command the fix code prints over the
//! fixtures under `tests/fixtures` (through `gpukb doctor`) is classified;
//! an unclassified command fails the test, so a new command is reviewed
//! when it is written.
#![allow(clippy::disallowed_methods)] // tests read fixture trees and run the binary

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpukb_doctor::effect::{effects_of as table_effects_of, Effect};

/// Every effect of one printed command line (gpukb's one table,
/// `kb/doctor/src/effect.rs`); `Err` names the segments it does not know.
fn effects_of(step: &str) -> Result<Vec<Effect>, Vec<String>> {
    table_effects_of(step).map_err(|u| u.unknown)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(entry, step)` for every fix step of every KB entry.
fn kb_steps() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("kb/entries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for f in files {
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let id = f.file_stem().unwrap().to_string_lossy().into_owned();
        for fix in v
            .get("fixes")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
        {
            for s in fix
                .get("steps")
                .and_then(|x| x.as_array())
                .into_iter()
                .flatten()
            {
                out.push((id.clone(), s.as_str().unwrap().to_string()));
            }
        }
    }
    out
}

#[test]
fn every_kb_command_is_classified() {
    let steps = kb_steps();
    assert!(steps.len() > 500, "only {} KB steps", steps.len());
    let unknown: Vec<String> = steps
        .iter()
        .filter_map(|(id, s)| effects_of(s).err().map(|u| format!("{id}: {s:?}: {u:?}")))
        .collect();
    assert!(
        unknown.is_empty(),
        "commands the harm table does not know (add them to EFFECTS or INERT):\n{}",
        unknown.join("\n")
    );
}

/// Every fixture directory with an `EXPECT.toml`, and how doctor reads it.
fn fixture_dirs() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for group in std::fs::read_dir(repo().join("tests/fixtures")).unwrap() {
        let g = group.unwrap().path();
        let mut dirs = vec![g.clone()];
        if let Ok(rd) = std::fs::read_dir(&g) {
            dirs.extend(rd.filter_map(|e| e.ok().map(|e| e.path())));
        }
        for d in dirs {
            let Ok(t) = std::fs::read_to_string(d.join("EXPECT.toml")) else {
                continue;
            };
            let v: toml::Value = toml::from_str(&t).unwrap();
            let flag = match v.get("input").and_then(|x| x.as_str()) {
                Some("replay") => "--replay",
                Some("root") => "--root",
                _ => continue,
            };
            out.push((d, flag));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `(fixture, finding check, fix step JSON)` for every fix doctor prints.
fn doctor_fix_steps() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (dir, flag) in fixture_dirs() {
        let o = Command::new(env!("CARGO_BIN_EXE_gpukb"))
            .args(["doctor", flag])
            .arg(&dir)
            .arg("--json")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in v["findings"].as_array().into_iter().flatten() {
            for s in f["fixes"].as_array().into_iter().flatten() {
                out.push((
                    name.clone(),
                    f["check"].as_str().unwrap_or("").to_string(),
                    s.clone(),
                ));
            }
        }
    }
    out
}

#[test]
fn every_command_doctor_prints_over_the_fixtures_is_classified() {
    let steps = doctor_fix_steps();
    assert!(
        steps.len() > 20,
        "only {} fix steps over the fixtures",
        steps.len()
    );
    let mut unknown = Vec::new();
    let mut seen: BTreeMap<Effect, usize> = BTreeMap::new();
    for (fixture, check, s) in &steps {
        for c in s["commands"].as_array().into_iter().flatten() {
            let c = c.as_str().unwrap();
            match effects_of(c) {
                Ok(es) => es
                    .into_iter()
                    .for_each(|e| *seen.entry(e).or_default() += 1),
                Err(u) => unknown.push(format!("{fixture} {check}: {c:?}: {u:?}")),
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "commands the harm table does not know:\n{}",
        unknown.join("\n")
    );
    // The fixtures exercise the harmful kinds the table exists for.
    for e in [
        Effect::DriverInstall,
        Effect::Reboot,
        Effect::PythonEnvInstall,
        Effect::ModuleUnload,
    ] {
        assert!(
            seen.contains_key(&e),
            "no fixture prints a {e:?} fix: {seen:?}"
        );
    }
}

#[test]
fn package_holds_never_catch_the_container_toolkit() {
    // newcomer.md Problem 2: `apt-mark hold $(... | grep -E '^(nvidia-|libnvidia-)')`
    // also holds nvidia-container-toolkit and libnvidia-container1, blocking
    // their security updates.
    let grep = Regex::new(r#"grep\s+-E\s+(?:--\s+)?(?:'([^']*)'|"([^"]*)")"#).unwrap();
    let mut bad = Vec::new();
    for (id, s) in kb_steps() {
        if !effects_of(&s).is_ok_and(|e| e.contains(&Effect::PackageHold)) {
            continue;
        }
        for c in grep.captures_iter(&s) {
            let pat = c.get(1).or(c.get(2)).unwrap().as_str();
            let pat = pat.replace("${BR}", "580").replace("$BR", "580");
            let re = Regex::new(&pat).unwrap_or_else(|e| panic!("{id}: {pat}: {e}"));
            let caught: Vec<&str> = ["nvidia-container-toolkit", "libnvidia-container1"]
                .into_iter()
                .filter(|p| re.is_match(p))
                .collect();
            if !caught.is_empty() && !s.contains("grep -v container") {
                bad.push(format!("{id}: {s:?} holds {caught:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
