//! The folders show the crate graph (issue 24 §1): in the fixed top level,
//! `jetson/`, `kernels/`, `agent/` (facts, observation), `kb/` (compile, the
//! doctor and search), `cli/` (the monitor and the binary), `tests/`, a crate
//! depends only on crates of its own folder or of one listed earlier. Read
//! from `cargo metadata`, so a new dependency that points back up fails here.
#![allow(clippy::disallowed_methods)] // runs cargo metadata

use std::path::Path;

/// The top-level folders in graph order.
const ORDER: &[&str] = &["jetson", "kernels", "agent", "kb", "cli", "tests"];

/// The rank of the top-level folder a manifest lives in.
fn rank(root: &Path, manifest: &str) -> usize {
    let rel = Path::new(manifest)
        .strip_prefix(root)
        .unwrap_or(Path::new(manifest));
    let top = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    ORDER
        .iter()
        .position(|f| *f == top)
        .unwrap_or_else(|| panic!("{manifest} is in no folder of {ORDER:?}"))
}

/// The workspace root and its packages, from `cargo metadata`.
fn packages() -> (std::path::PathBuf, Vec<serde_json::Value>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (root, v["packages"].as_array().unwrap().clone())
}

#[test]
fn no_crate_depends_on_a_crate_of_a_later_folder() {
    let (root, pkgs) = packages();
    let by_name: std::collections::HashMap<&str, &str> = pkgs
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["manifest_path"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(by_name.len() >= 9, "{by_name:?}");
    let mut edges = 0;
    let mut bad = Vec::new();
    for p in &pkgs {
        let name = p["name"].as_str().unwrap();
        let from = rank(&root, p["manifest_path"].as_str().unwrap());
        for d in p["dependencies"].as_array().unwrap() {
            let Some(dep_manifest) = by_name.get(d["name"].as_str().unwrap()) else {
                continue;
            };
            edges += 1;
            let to = rank(&root, dep_manifest);
            if to > from {
                bad.push(format!(
                    "{name} ({}/) depends on {} ({}/)",
                    ORDER[from],
                    d["name"].as_str().unwrap(),
                    ORDER[to]
                ));
            }
        }
    }
    assert!(edges >= 10, "only {edges} workspace dependencies");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The doctor judges facts only: the knowledge base links its entries to the
/// doctor's findings (`Kb::link_entries`), never the reverse (issue 24 §1). Its
/// dev-dependencies count too: its tests need no knowledge base either.
#[test]
fn the_doctor_depends_on_the_facts_and_jetson_only() {
    let (_, pkgs) = packages();
    let doctor = pkgs
        .iter()
        .find(|p| p["name"] == "gpukb-doctor")
        .expect("the gpukb-doctor package");
    let ours: Vec<&str> = doctor["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .filter(|n| n.starts_with("gpukb"))
        .collect();
    let allowed = ["gpukb-facts", "gpukb-jetson"];
    let extra: Vec<&&str> = ours.iter().filter(|n| !allowed.contains(n)).collect();
    assert!(
        extra.is_empty(),
        "gpukb-doctor depends on {extra:?}; it may depend only on {allowed:?}"
    );
    assert!(ours.contains(&"gpukb-facts"), "{ours:?}");
}
