//! The history's failure modes: a corrupt, foreign, newer, read-only or
//! busy database is a one-line error and the file is left byte for byte as
//! it was; a writer killed with SIGKILL mid-run loses nothing it committed.
#![allow(clippy::disallowed_methods)] // tests read their own files and re-run this binary

use gpukb_monitor::snapshot::{judge, Snapshot};
use gpukb_monitor::store::Store;
use gpukb_monitor::MonitorError;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

fn snapshot() -> Snapshot {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/h200/fingerprint.json");
    let fp = gpukb_facts::read::fingerprint_from_json(&std::fs::read(path).unwrap()).unwrap();
    judge(fp, "test", None, 1_796_000_000)
}

fn one_line(e: &MonitorError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "one line: {s}");
    s
}

#[test]
fn garbage_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.db");
    let junk = b"this is not a database, it is a note someone left here\n".repeat(200);
    std::fs::write(&p, &junk).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, MonitorError::Corrupt { .. }), "{e:?}");
    assert!(one_line(&e).contains("left untouched"));
    assert_eq!(std::fs::read(&p).unwrap(), junk);
    assert!(!dir.path().join("agent.db-wal").exists());
}

#[test]
fn truncated_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.db");
    {
        let mut s = Store::open(&p).unwrap();
        for i in 0..30 {
            let mut snap = snapshot();
            snap.at += i;
            snap.fingerprint.env.push(gpukb_facts::fingerprint::EnvVar {
                name: "PATH".into(),
                value: format!("/bin:{i}"),
            });
            s.record(&snap, &[]).unwrap();
        }
    }
    // Fold the WAL in, then cut the file in half.
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
        .unwrap();
    let full = std::fs::read(&p).unwrap();
    assert!(full.len() > 8192, "{}", full.len());
    let half = &full[..full.len() / 2];
    std::fs::write(&p, half).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, MonitorError::Corrupt { .. }), "{e:?}");
    one_line(&e);
    assert_eq!(std::fs::read(&p).unwrap(), half);
}

#[test]
fn another_programs_database_and_a_newer_schema_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other.db");
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    let before = std::fs::read(&p).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, MonitorError::Foreign { .. }), "{e:?}");
    assert_eq!(std::fs::read(&p).unwrap(), before);

    let q = dir.path().join("newer.db");
    drop(Store::open(&q).unwrap());
    rusqlite::Connection::open(&q)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    let e = Store::open(&q).err().expect("refused");
    assert!(matches!(e, MonitorError::TooNew { found: 99, .. }), "{e:?}");
    assert!(one_line(&e).contains("newer"));
}

#[test]
fn a_directory_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let e = Store::open(dir.path()).err().expect("refused");
    one_line(&e);
}

#[test]
fn read_only_database_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.db");
    drop(Store::open(&p).unwrap());
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root ignores file modes; check the mapping of SQLite's answer instead:
        // a connection SQLite opened read-only is refused the same way.
        let e = Store::open_with(&p, Duration::from_secs(1), false);
        assert!(e.is_ok(), "root can write it");
        eprintln!(
            "running as root: file modes do not apply, read-only checked through the mapping only"
        );
        let c =
            rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let err = c.execute_batch("CREATE TABLE x(y)").unwrap_err();
        assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::ReadOnly));
        return;
    }
    let before = std::fs::read(&p).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, MonitorError::ReadOnly { .. }), "{e:?}");
    one_line(&e);
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn busy_database_waits_then_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.db");
    drop(Store::open(&p).unwrap());
    let holder = rusqlite::Connection::open(&p).unwrap();
    holder
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO counters VALUES ('held', 1);")
        .unwrap();
    let mut s = Store::open_with(&p, Duration::from_millis(300), false).unwrap();
    let t = Instant::now();
    let e = s.record(&snapshot(), &[]).expect_err("busy");
    let waited = t.elapsed();
    assert!(matches!(e, MonitorError::Busy { .. }), "{e:?}");
    assert!(
        waited >= Duration::from_millis(250),
        "it waited for the lock ({waited:?})"
    );
    one_line(&e);
    // A shorter contention is waited out.
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        holder.execute_batch("COMMIT").unwrap();
    });
    let mut s2 = Store::open_with(&p, Duration::from_secs(5), false).unwrap();
    s2.record(&snapshot(), &[])
        .expect("waited out the short lock");
    releaser.join().unwrap();
}

/// The child side of the kill -9 test: records snapshots forever, printing
/// each committed id. Runs only when the parent test starts it.
#[test]
fn child_writer() {
    let Ok(db) = std::env::var("GPUKB_MONITOR_TEST_CHILD_DB") else {
        return;
    };
    let mut s = Store::open(Path::new(&db)).unwrap();
    let base = snapshot();
    for i in 0.. {
        let mut snap = base.clone();
        snap.at += i;
        snap.fingerprint.env.push(gpukb_facts::fingerprint::EnvVar {
            name: "PATH".into(),
            value: format!("/bin:{i}"),
        });
        let id = s.record(&snap, &[]).unwrap();
        println!("committed {id}");
    }
}

#[test]
fn kill_9_mid_write_loses_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env("GPUKB_MONITOR_TEST_CHILD_DB", &db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut last = 0i64;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while last < 25 {
        let line = lines.next().expect("child prints").unwrap();
        if let Some(pos) = line.find("committed ") {
            last = line[pos + 10..].trim().parse().unwrap();
        }
    }
    // SIGKILL while it is in the middle of its next writes.
    child.kill().unwrap();
    let _ = child.wait();
    let s = Store::open(&db).expect("reopens after kill -9");
    let h = s.history(None).unwrap();
    let ids: Vec<i64> = h.snapshots.iter().map(|s| s.id).collect();
    for id in 1..=last {
        assert!(
            ids.contains(&id),
            "committed snapshot {id} lost; have {} rows",
            ids.len()
        );
        if id % 5 == 0 {
            s.snapshot(id).expect("decodes");
        }
    }
    let check: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// A history written by schema 1 (before acknowledgements): the SQL of
/// migration 1 as it shipped, one kernel event and its `events` row.
fn schema_1(p: &Path) {
    let c = rusqlite::Connection::open(p).unwrap();
    c.execute_batch(
        "CREATE TABLE blobs(id INTEGER PRIMARY KEY, json TEXT NOT NULL);
         CREATE TABLE snapshots(
            id INTEGER PRIMARY KEY, at INTEGER NOT NULL, verdict TEXT NOT NULL,
            summary TEXT NOT NULL, input TEXT NOT NULL,
            fingerprint INTEGER NOT NULL REFERENCES blobs(id),
            diagnosis INTEGER NOT NULL REFERENCES blobs(id));
         CREATE INDEX snapshots_at ON snapshots(at);
         CREATE TABLE events(
            id INTEGER PRIMARY KEY, at INTEGER NOT NULL, snapshot INTEGER,
            kind TEXT NOT NULL, what TEXT NOT NULL, label TEXT NOT NULL,
            before TEXT, after TEXT, meaning TEXT NOT NULL);
         CREATE INDEX events_at ON events(at);
         CREATE TABLE kernel_events(
            boot_id TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
            kind TEXT NOT NULL, code INTEGER, gpu TEXT NOT NULL, message TEXT NOT NULL,
            PRIMARY KEY(boot_id, seq));
         CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
         INSERT INTO events(at, snapshot, kind, what, label, before, after, meaning)
           VALUES (100, NULL, 'stack', 'driver.version', 'driver', 'a', 'b', '');
         INSERT INTO kernel_events VALUES ('b1', 7, 200, 'xid', 79, 'PCI:0000:44:00', 'NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus');
         INSERT INTO events(at, snapshot, kind, what, label, before, after, meaning)
           VALUES (200, NULL, 'kernel', 'xid[PCI:0000:44:00].79', 'kernel log', NULL,
                   'NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus', 'Xid 79');
         PRAGMA application_id = 1735420770; PRAGMA user_version = 1;",
    )
    .unwrap();
}

#[test]
fn a_schema_1_history_is_upgraded_and_its_kernel_events_can_be_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.db");
    schema_1(&p);
    let mut s = Store::open(&p).expect("an older history opens");
    assert_eq!(
        s.schema_version().unwrap(),
        gpukb_monitor::store::SCHEMA_VERSION
    );
    let h = s.history(None).unwrap();
    assert_eq!(h.events.len(), 2);
    assert!(h
        .events
        .iter()
        .all(|e| e.acked_at.is_none() && e.note.is_none()));
    // The kernel event found its events row (by time, kind, GPU and text).
    let active = s.kernel_active("b1").unwrap();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].event_id, Some(h.events[1].id));
    assert!(s.ack(h.events[1].id, Some("checked"), 300).unwrap());
    assert!(s.kernel_active("b1").unwrap().is_empty());
    assert!(!s.ack(12345, None, 300).unwrap(), "no such event");
    let e = s.event(h.events[1].id).unwrap().unwrap();
    assert_eq!(
        (e.acked_at, e.note.as_deref()),
        (Some(300), Some("checked"))
    );
}
