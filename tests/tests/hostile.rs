//! Hostile roots and captures (issue 12 §2, §8): a FIFO where a file should
//! be, a symlink that points outside the root, a capture of a newer format or
//! whose journal is a FIFO. Each must end quickly with a failed observation or
//! a one-line error, never hang or read outside the root.
#![allow(clippy::disallowed_methods)] // tests build fixture trees

use gpukb_agent::fingerprint::Observed;
use gpukb_agent::host::Host;
use gpukb_agent::{fingerprint, Fingerprint, Settings};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Fingerprints `host` on a thread; panics if it takes longer than 20 s (a hang).
fn bounded(host: Host) -> Fingerprint {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(fingerprint(Arc::new(host), &Settings::default()));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the fingerprint hung")
}

fn mkfifo(path: &std::path::Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn a_fifo_in_a_root_is_a_failed_observation_not_a_hang() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("etc")).unwrap();
    mkfifo(&t.path().join("etc/os-release"));
    let fp = bounded(Host::root_dir(t.path()));
    match &fp.host.os {
        Observed::Failed { error, .. } => assert!(error.contains("named pipe"), "{error}"),
        other => panic!("expected failed, got {other:?}"),
    }
}

#[test]
fn a_fifo_in_a_capture_is_a_failed_observation_not_a_hang() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    std::fs::create_dir_all(dir.join("root/etc")).unwrap();
    mkfifo(&dir.join("root/etc/os-release"));
    let journal = serde_json::json!({
        "format": 1, "gpukb_version": "0.1.0",
        "files": {"/etc/os-release": {"ok": 10}},
        "lists": {}, "canon": {}, "elf": {}, "commands": {}, "answers": {}, "env": {}
    });
    std::fs::write(dir.join("capture.json"), journal.to_string()).unwrap();
    let fp = bounded(Host::replay(dir).unwrap());
    assert!(
        matches!(fp.host.os, Observed::Failed { .. }),
        "{:?}",
        fp.host.os
    );
}

#[test]
fn an_absolute_symlink_in_a_root_stays_inside_the_root() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    // On the host /etc/os-release names the host's OS; inside the root the
    // link must resolve to the root's own usr/lib/os-release.
    std::fs::create_dir_all(root.join("usr/lib")).unwrap();
    std::fs::write(
        root.join("usr/lib/os-release"),
        "PRETTY_NAME=\"Inside The Root 1.0\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("/usr/lib/os-release", root.join("etc/os-release")).unwrap();
    let fp = bounded(Host::root_dir(&root));
    assert_eq!(
        fp.host.os.value().map(String::as_str),
        Some("Inside The Root 1.0")
    );
    // A link to a host file that the root lacks is absent, not the host's copy.
    std::fs::remove_file(root.join("usr/lib/os-release")).unwrap();
    let fp = bounded(Host::root_dir(&root));
    assert!(
        fp.host.os.value().is_none(),
        "read outside the root: {:?}",
        fp.host.os
    );
}

#[test]
fn a_directory_symlink_in_a_root_is_listed_inside_the_root() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    // /opt in the root is an absolute link to /data/opt, which exists only in the root.
    std::fs::create_dir_all(root.join("data/opt/inside-only")).unwrap();
    std::os::unix::fs::symlink("/data/opt", root.join("opt")).unwrap();
    let host = Host::root_dir(&root);
    let names: Vec<String> = host
        .list("/opt")
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["inside-only".to_string()]);
    // A link to a host directory the root lacks lists nothing.
    std::os::unix::fs::symlink("/usr", root.join("hostusr")).unwrap();
    assert!(host.list("/hostusr").unwrap().is_none());
}

#[test]
fn a_newer_capture_format_says_so_and_a_fifo_journal_does_not_block() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("capture.json"), r#"{"format": 99}"#).unwrap();
    let e = Host::replay(t.path()).unwrap_err().to_string();
    assert!(
        e.contains("capture format 99 is newer than this gpukb"),
        "{e}"
    );
    let t = tempfile::tempdir().unwrap();
    mkfifo(&t.path().join("capture.json"));
    let (tx, rx) = mpsc::channel();
    let dir = t.path().to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(Host::replay(&dir).map(|_| ()).map_err(|e| e.to_string()));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("opening a FIFO journal hung");
    assert!(r.unwrap_err().contains("not a regular file"));
}
