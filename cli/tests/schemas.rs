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
