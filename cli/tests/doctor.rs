//! `gpukb doctor` over recorded broken machines (`tests/fixtures/broken/*`)
//! and healthy controls (`tests/fixtures/healthy/*`): each fixture's
//! `EXPECT.toml` names the verdict, the exit code and the root cause (check,
//! layer, severity), and the consequences that root cause must explain. Each
//! is run through the real binary, as a user would.
#![allow(clippy::disallowed_methods)] // tests read fixture trees and run the binary

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn fixtures(group: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(fixture(group))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("EXPECT.toml").is_file())
        .collect();
    v.sort();
    v
}

fn doctor(dir: &Path, expect: &toml::Value) -> (i32, Value, String) {
    let input = expect["input"].as_str().unwrap();
    let flag = match input {
        "replay" => "--replay",
        "root" => "--root",
        other => panic!("{}: unknown input {other}", dir.display()),
    };
    let run = |json: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gpukb"));
        c.arg("doctor").arg(flag).arg(dir).env("NO_COLOR", "1");
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let out = run(true);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let text = run(false);
    assert_eq!(
        text.status.code(),
        out.status.code(),
        "text and JSON exit alike"
    );
    (
        out.status.code().unwrap(),
        v,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

fn expect(dir: &Path) -> toml::Value {
    let t = std::fs::read_to_string(dir.join("EXPECT.toml")).unwrap();
    toml::from_str(&t).unwrap()
}

#[test]
fn every_broken_machine_names_its_root_cause_first() {
    let all = fixtures("broken");
    assert!(all.len() >= 20, "only {} broken machines", all.len());
    let mut modes = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for dir in &all {
        assert!(
            dir.join("SOURCE.md").is_file(),
            "{}: no SOURCE.md",
            dir.display()
        );
        let e = expect(dir);
        let (code, d, text) = doctor(dir, &e);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));
        if d["verdict"] != e["verdict"].as_str().unwrap() {
            fail(format!(
                "verdict {} (expected {})",
                d["verdict"], e["verdict"]
            ));
        }
        if i64::from(code) != e["exit"].as_integer().unwrap() {
            fail(format!("exit {code} (expected {})", e["exit"]));
        }
        let Some(rc) = e.get("root_cause") else {
            if d["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["severity"] != "info")
            {
                fail("a finding above info where none is expected".into());
            }
            continue;
        };
        let check = rc["check"].as_str().unwrap();
        modes.insert(check.to_string());
        let first = &d["findings"][0];
        if first["check"] != check || first["root_cause"] != true {
            fail(format!(
                "first finding {} (expected root cause {check})\n{text}",
                first["check"]
            ));
            continue;
        }
        if first["layer"] != rc["layer"].as_str().unwrap() {
            fail(format!(
                "layer {} (expected {})",
                first["layer"], rc["layer"]
            ));
        }
        if first["severity"] != rc["severity"].as_str().unwrap() {
            fail(format!(
                "severity {} (expected {})",
                first["severity"], rc["severity"]
            ));
        }
        if first["evidence"].as_array().unwrap().is_empty() {
            fail("the root cause cites no evidence".into());
        }
        for c in e
            .get("consequence")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
        {
            let cc = c["check"].as_str().unwrap();
            let found = d["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["check"] == cc);
            match found {
                Some(f) if f["root_cause"] == false && f["explained_by"] == first["id"] => {}
                Some(f) => fail(format!("{cc} is not explained by {}: {f}", first["id"])),
                None => fail(format!("consequence {cc} missing")),
            }
        }
        // The text report says the same thing first.
        let root_line = text
            .lines()
            .find(|l| l.contains("root cause") || l.starts_with("! warning ["))
            .unwrap_or("");
        if !root_line.contains(first["title"].as_str().unwrap()) {
            fail(format!("text report leads with {root_line:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        modes.len() >= 20,
        "only {} distinct failure modes: {modes:?}",
        modes.len()
    );
}

#[test]
fn healthy_controls_are_ok_with_nothing_above_info() {
    let mut all = fixtures("healthy");
    all.push(fixture("h200"));
    for dir in &all {
        let e = if dir.join("EXPECT.toml").is_file() {
            expect(dir)
        } else {
            toml::from_str("input = \"replay\"\nverdict = \"ok\"\nexit = 0").unwrap()
        };
        let (code, d, text) = doctor(dir, &e);
        assert_eq!(d["verdict"], "ok", "{}\n{text}", dir.display());
        assert_eq!(code, 0, "{}", dir.display());
        for f in d["findings"].as_array().unwrap() {
            assert_eq!(f["severity"], "info", "{}: {}", dir.display(), f["title"]);
        }
    }
}

#[test]
fn an_idle_geforce_at_gen1_is_context_not_a_fault() {
    let dir = fixture("healthy").join("geforce-idle-gen1");
    let (_, d, _) = doctor(&dir, &expect(&dir));
    let pcie = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "pcie_link_degraded")
        .expect("the idle link is reported as context");
    assert_eq!(pcie["severity"], "info");
    assert_eq!(
        d["checks"]["pcie_link_degraded"]["outcome"], "clear",
        "an idle link does not confirm a downtrained-link diagnosis"
    );
}
