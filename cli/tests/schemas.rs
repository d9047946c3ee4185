//! The published JSON Schemas (issue 13 §5): `cli/schemas/*.schema.json` are
//! what the types generate now (`GPUKB_BLESS=1` rewrites them), and real
//! outputs of every fixture validate against them: fingerprint and doctor of
//! every capture and root fixture, every `capture.json`, `fingerprint.json`
//! and `probe.json`, search with each fixture's facts, `kb list` and every
//! `kb show`.
#![allow(clippy::disallowed_methods)] // reads fixtures and runs the binary

use gpukb_cli::schemas::{find, SCHEMAS};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn gpukb(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

fn validator(name: &str) -> jsonschema::Validator {
    let path = repo().join(format!("cli/schemas/{name}.schema.json"));
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn check(v: &jsonschema::Validator, name: &str, what: &str, doc: &serde_json::Value) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the {name} schema: {errors:?}"
    );
}

#[test]
fn checked_in_schemas_are_what_the_types_generate() {
    let dir = repo().join("cli/schemas");
    let bless = std::env::var_os("GPUKB_BLESS").is_some();
    let mut stale = Vec::new();
    for s in SCHEMAS {
        let text = serde_json::to_string_pretty(&(s.generate)()).unwrap() + "\n";
        let path = dir.join(format!("{}.schema.json", s.name));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(s.name);
        }
    }
    assert!(
        stale.is_empty(),
        "cli/schemas/ is stale for {stale:?}: check the change follows cli/schemas/README.md, then run GPUKB_BLESS=1 cargo test -p gpukb --test schemas"
    );
    // No orphan file: every checked-in schema is generated.
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".schema.json") {
            assert!(
                find(stem).is_some(),
                "cli/schemas/{name} is not in schemas::SCHEMAS"
            );
        }
    }
    // `gpukb schema NAME` prints the same.
    assert_eq!(
        gpukb(&["schema", "fingerprint"]),
        (find("fingerprint").unwrap().generate)()
    );
}

/// Every fixture: (directory, the machine argument that reads it).
fn fixtures() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    let mut dirs = vec![repo().join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if !p.is_dir() || p.file_name().is_some_and(|n| n == "root") {
                continue;
            }
            if p.join("capture.json").is_file() {
                out.push((p, "--replay"));
            } else if p.join("etc").is_dir() {
                out.push((p, "--root"));
            } else {
                dirs.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn outputs_of_every_fixture_match_their_schemas() {
    let fingerprint = validator("fingerprint");
    let doctor = validator("doctor");
    let capture = validator("capture");
    let probe = validator("probe");
    let search = validator("search");
    let fixtures = fixtures();
    assert!(fixtures.len() >= 40, "{}", fixtures.len());
    let tmp = tempfile::tempdir().unwrap();
    for (i, (dir, how)) in fixtures.iter().enumerate() {
        let d = dir.to_str().unwrap();
        let what = dir
            .strip_prefix(repo())
            .unwrap_or(dir)
            .display()
            .to_string();
        let fp = gpukb(&["fingerprint", how, d, "--json"]);
        check(&fingerprint, "fingerprint", &what, &fp);
        check(
            &doctor,
            "doctor",
            &what,
            &gpukb(&["doctor", how, d, "--json"]),
        );
        for (file, v, name) in [
            ("capture.json", &capture, "capture"),
            ("fingerprint.json", &fingerprint, "fingerprint"),
            ("probe.json", &probe, "probe"),
        ] {
            if let Ok(bytes) = std::fs::read(dir.join(file)) {
                let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                // Fingerprint schema 1 files are read (converted) but not published.
                if name == "fingerprint"
                    && doc["schema"] != gpukb_facts::fingerprint::SCHEMA_VERSION
                {
                    continue;
                }
                check(v, name, &format!("{what}/{file}"), &doc);
            }
        }
        // search with this machine's facts (a few fixtures: each run loads the KB).
        if i % 8 == 0 {
            let f = tmp.path().join(format!("fp{i}.json"));
            std::fs::write(&f, serde_json::to_vec(&fp).unwrap()).unwrap();
            let out = gpukb(&[
                "search",
                "--fingerprint",
                f.to_str().unwrap(),
                "--json",
                "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            ]);
            assert!(!out["results"].as_array().unwrap().is_empty());
            check(&search, "search", &what, &out);
        }
    }
    for f in [
        "tests/fixtures/h200-probe/probe.json",
        "tests/fixtures/h200-probe/probe-x2.json",
    ] {
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(repo().join(f)).unwrap()).unwrap();
        check(&probe, "probe", f, &doc);
    }
    // A document the schema must reject, so validation can fail.
    let mut bad = gpukb(&[
        "doctor",
        "--replay",
        fixtures[0].0.to_str().unwrap(),
        "--json",
    ]);
    bad["verdict"] = "maybe".into();
    assert!(!doctor.is_valid(&bad));
    let mut bad_fp = gpukb(&[
        "fingerprint",
        "--replay",
        fixtures[0].0.to_str().unwrap(),
        "--json",
    ]);
    bad_fp["host"]["os"]["status"] = "perhaps".into();
    assert!(!fingerprint.is_valid(&bad_fp));
}

#[test]
fn kb_list_and_every_kb_show_match_their_schemas() {
    let list = gpukb(&["kb", "list", "--json"]);
    check(&validator("kb-list"), "kb-list", "kb list", &list);
    let show = validator("kb-show");
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.len() > 100);
    // The binary for a few, the same serialisation for all.
    for id in ids.iter().step_by(40) {
        check(&show, "kb-show", id, &gpukb(&["kb", "show", id, "--json"]));
    }
    let kb = gpukb_kb::Kb::open().unwrap();
    for id in &ids {
        let e = serde_json::to_value(kb.entry(id).unwrap().unwrap()).unwrap();
        check(&show, "kb-show", id, &e);
    }
}

#[test]
fn plan_of_every_fixture_and_of_described_machines_matches_its_schema() {
    let plan = validator("plan");
    let fixtures = fixtures();
    for (dir, how) in &fixtures {
        let what = dir
            .strip_prefix(repo())
            .unwrap_or(dir)
            .display()
            .to_string();
        check(
            &plan,
            "plan",
            &what,
            &gpukb(&["plan", how, dir.to_str().unwrap(), "--json"]),
        );
    }
    let captures: Vec<&str> = fixtures
        .iter()
        .filter(|(_, how)| *how == "--replay")
        .map(|(d, _)| d.to_str().unwrap())
        .take(3)
        .collect();
    let fleet = gpukb(&[
        "plan",
        "--replay",
        captures[0],
        "--replay",
        captures[1],
        "--replay",
        captures[2],
        "--json",
    ]);
    assert_eq!(fleet["machines"].as_array().map(Vec::len), Some(3));
    check(&plan, "plan", "a fleet of three captures", &fleet);
    for described in [
        &["--gpu", "RTX 4060 Ti", "--driver", "535"][..],
        &["--gpu", "7.0", "--gpu", "9.0", "--python", "3.12"],
        &["--gpu", "Jetson Orin NX", "--jetpack", "6.2"],
        &["--gpu", "12.0", "--driver", "570", "--arch", "aarch64"],
        &["--gpu", "3.5", "--driver", "470"],
        &["--gpu", "9.0", "--driver", "580", "--torch", ">=2.4,<2.6"],
    ] {
        let mut args = vec!["plan"];
        args.extend_from_slice(described);
        args.push("--json");
        let doc = gpukb(&args);
        assert_eq!(doc["schema_version"], 1, "{described:?}");
        check(&plan, "plan", &format!("{described:?}"), &doc);
    }
    // A document the schema must reject.
    let mut bad = gpukb(&["plan", "--gpu", "9.0", "--driver", "580", "--json"]);
    bad["torch"]["candidates"][0]["reasons"] =
        serde_json::json!([{"code": "perhaps", "gpu": null, "text": "", "source": ""}]);
    assert!(!plan.is_valid(&bad));
}

#[test]
fn agent_once_history_and_diff_match_their_schemas() {
    let once = validator("agent-once");
    let history = validator("history");
    let diff = validator("diff");
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    let db_s = db.to_str().unwrap();
    let prom = tmp.path().join("gpukb.prom");
    let fixtures: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|(_, how)| *how == "--replay")
        .map(|(d, _)| d)
        .collect();
    // A healthy machine, then broken ones, into one history: the later passes have a
    // previous snapshot and changes.
    let healthy = repo().join("tests/fixtures/healthy/h200-live-2026-12-01");
    let broken = repo().join("tests/fixtures/broken/driver-too-old-for-torch");
    let mut runs = vec![healthy.clone(), broken.clone(), healthy.clone()];
    runs.extend(fixtures.iter().step_by(6).cloned());
    let mut changed = 0;
    for dir in &runs {
        let d = dir.to_str().unwrap();
        let doc = gpukb(&[
            "agent",
            "--once",
            "--replay",
            d,
            "--db",
            db_s,
            "--textfile",
            prom.to_str().unwrap(),
            "--json",
        ]);
        changed += usize::from(!doc["changes"].as_array().unwrap().is_empty());
        check(&once, "agent-once", d, &doc);
    }
    assert!(changed >= 2, "no pass saw a change");
    let h = gpukb(&["history", "--db", db_s, "--json"]);
    assert_eq!(h["snapshots"].as_array().map(Vec::len), Some(runs.len()));
    assert!(!h["events"].as_array().unwrap().is_empty());
    check(&history, "history", "history of the temporary database", &h);
    // diff of two fixtures, of a fixture with itself, and of two snapshots.
    let d = gpukb(&[
        "diff",
        healthy.to_str().unwrap(),
        broken.to_str().unwrap(),
        "--json",
    ]);
    assert!(!d["changes"].as_array().unwrap().is_empty());
    check(&diff, "diff", "healthy -> broken", &d);
    let same = gpukb(&[
        "diff",
        healthy.to_str().unwrap(),
        healthy.to_str().unwrap(),
        "--json",
    ]);
    check(&diff, "diff", "healthy -> healthy", &same);
    let snaps = gpukb(&["diff", "@1", "@2", "--db", db_s, "--json"]);
    check(&diff, "diff", "@1 -> @2", &snaps);
    for (a, b) in fixtures.iter().zip(fixtures.iter().skip(1)).step_by(5) {
        let doc = gpukb(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
        check(
            &diff,
            "diff",
            &format!("{} -> {}", a.display(), b.display()),
            &doc,
        );
    }
    // Documents the schemas must reject.
    let mut bad = gpukb(&[
        "agent",
        "--once",
        "--replay",
        healthy.to_str().unwrap(),
        "--db",
        db_s,
        "--json",
    ]);
    bad["snapshot"]["verdict"] = "maybe".into();
    assert!(!once.is_valid(&bad));
    let mut bad = h.clone();
    bad["snapshots"][0]["id"] = "one".into();
    assert!(!history.is_valid(&bad));
    let mut bad = d.clone();
    bad["changes"][0]["before"] = 5.into();
    assert!(!diff.is_valid(&bad));
}
