//! The daemon as a process: `--listen` serves a parseable `/metrics`,
//! `/health` follows the node's verdict (the doctor's and the Xid policy's), `/healthz` the sampling loop; a
//! watched file's change triggers a stack snapshot at once; SIGHUP reopens
//! the history; SIGTERM stops it cleanly with status 0.
#![allow(clippy::disallowed_methods)] // tests run the binary and write a root directory

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut r = String::new();
    s.read_to_string(&mut r).unwrap();
    let status = r.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = r
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    (status, body)
}

fn wait_for(rx: &mpsc::Receiver<String>, what: &str, lines: &mut Vec<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            lines.push(l.clone());
            if l.contains(what) {
                return l;
            }
        }
    }
    panic!("no line with {what:?}; got {lines:#?}");
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: sending a signal to the child this test started.
    assert_eq!(unsafe { libc_kill(pid as i32, sig) }, 0);
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn daemon_serves_reacts_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(
        root.join("etc/os-release"),
        "ID=ubuntu\nVERSION_ID=\"24.04\"\n",
    )
    .unwrap();
    let db = dir.path().join("agent.db");
    let prom = dir.path().join("gpukb.prom");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args([
            "agent",
            "--listen",
            "127.0.0.1:0",
            "--interval",
            "1s",
            "--stack-interval",
            "1h",
            "--root",
        ])
        .arg(&root)
        .arg("--db")
        .arg(&db)
        .arg("--textfile")
        .arg(&prom)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut lines = Vec::new();
    let serving = wait_for(&rx, "serving http://", &mut lines);
    let addr = serving
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics")
        .to_string();
    // The first sample lands within a couple of seconds.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut metrics = String::new();
    while Instant::now() < deadline {
        let (code, body) = get(&addr, "/metrics");
        if code == 200 && body.contains("gpukb_health") {
            metrics = body;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let exp = openmetrics_parser::prometheus::parse_prometheus(&metrics).expect("valid exposition");
    assert!(exp.families.contains_key("gpukb_info"), "{metrics}");
    // A root directory with no GPU: the verdict is unknown, so not ready.
    assert!(metrics.contains("gpukb_health 3\n"), "{metrics}");
    assert_eq!(get(&addr, "/health").0, 503);
    assert_eq!(get(&addr, "/healthz").0, 200, "sampling runs");
    assert_eq!(get(&addr, "/nope").0, 404);
    assert!(prom.is_file(), "the textfile is written too");

    // A watched file appears: a stack snapshot is taken at once.
    std::fs::write(
        root.join("etc/nv_tegra_release"),
        "# R36 (release), REVISION: 4.3, GCID: 1, BOARD: generic, EABI: aarch64, DATE: x\n",
    )
    .unwrap();
    wait_for(&rx, "a watched file changed", &mut lines);
    wait_for(&rx, "change jetson", &mut lines);

    signal(child.id(), 1); // SIGHUP
    wait_for(&rx, "SIGHUP: history reopened", &mut lines);
    signal(child.id(), 15); // SIGTERM
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let h = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["history", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    assert!(v["snapshots"].as_array().unwrap().len() >= 2, "{v}");
}

/// The daemon's `/health` on the recorded H200 with one recorded kernel-log
/// line: `(status, gpukb_health line)` once the first sample is served.
fn daemon_health(kmsg: &str) -> (u16, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args([
            "agent",
            "--listen",
            "127.0.0.1:0",
            "--interval",
            "1s",
            "--boot-id",
            "b",
        ])
        .arg("--replay")
        .arg(repo.join("tests/fixtures/healthy/h200-with-pci"))
        .arg("--kernel-log")
        .arg(repo.join("cli/monitor/tests/fixtures").join(kmsg))
        .arg("--db")
        .arg(dir.path().join("agent.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut lines = Vec::new();
    let serving = wait_for(&rx, "serving http://", &mut lines);
    let addr = serving
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics")
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut health = String::new();
    while Instant::now() < deadline && health.is_empty() {
        let (_, body) = get(&addr, "/metrics");
        health = body
            .lines()
            .find(|l| l.starts_with("gpukb_health "))
            .unwrap_or_default()
            .to_string();
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = get(&addr, "/health").0;
    signal(child.id(), 15);
    let _ = child.wait();
    (status, health)
}

#[test]
fn daemon_health_follows_the_xid_policy() {
    assert_eq!(
        daemon_health("kmsg-fail-xid79.txt"),
        (503, "gpukb_health 2".to_string())
    );
    assert_eq!(
        daemon_health("kmsg-application-xid13.txt"),
        (200, "gpukb_health 0".to_string())
    );
}
