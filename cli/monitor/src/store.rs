//! The history: snapshots (verdict, summary, the fingerprint and the
//! diagnosis as JSON), the events between them, kernel-log events, and the
//! counters Prometheus reads, in one SQLite file.
//!
//! Rules it keeps:
//! * WAL journal, `synchronous=FULL`: a commit is on disk when `record`
//!   returns, so a `kill -9` (or a power cut) loses nothing committed; every
//!   write is one transaction.
//! * The schema is versioned (`PRAGMA user_version`, `application_id`
//!   `gpkb`) and upgraded by ordered migrations; a file of a newer schema is
//!   refused, not downgraded.
//! * A file that is not a SQLite database, fails `quick_check`, belongs to
//!   another program, or cannot be written is a one-line error and is left
//!   exactly as it was: never replaced, truncated or re-initialised.
//! * A lock held by another process is waited for up to the busy timeout
//!   (5 s by default), then it is a one-line error.
//! * Retention by age and by size: the newest snapshot is always kept (the
//!   next one is compared with it). Space is reused, not returned to the
//!   file system (no VACUUM: it rewrites the whole file).

use crate::diff::{verdict_str, Change};
use crate::snapshot::Snapshot;
use crate::MonitorError;
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PRAGMA application_id` of a gpukb history: "gpkb".
pub const APPLICATION_ID: i64 = 0x6770_6b62;

/// Ordered schema migrations; `user_version` is how many were applied.
const MIGRATIONS: &[&str] = &[
    // 1: snapshots, events, kernel-log events, counters.
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
     CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);",
    // 2: acknowledgements (`gpukb agent --ack ID --note TEXT`), and each kernel
    // event's row in `events` (older rows are matched by time, kind, GPU and text).
    "ALTER TABLE events ADD COLUMN acked_at INTEGER;
     ALTER TABLE events ADD COLUMN note TEXT;
     ALTER TABLE kernel_events ADD COLUMN event_id INTEGER;
     UPDATE kernel_events SET event_id = (
        SELECT e.id FROM events e WHERE e.kind = 'kernel' AND e.at = kernel_events.at
          AND e.after = kernel_events.message
          AND substr(e.what, 1, length(kernel_events.kind) + length(kernel_events.gpu) + 2)
              = kernel_events.kind || '[' || kernel_events.gpu || ']'
        ORDER BY e.id LIMIT 1);",
];

/// The schema version this gpukb writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long to wait for another process's lock by default.
pub const DEFAULT_BUSY: Duration = Duration::from_secs(5);

/// An open history.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    busy: Duration,
}

/// One event row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Event {
    /// RFC 3339 in JSON.
    #[serde(serialize_with = "ser_time")]
    #[schemars(with = "String")]
    pub at: i64,
    /// `stack`, `health`, `finding`, `kernel` or `canary`.
    pub kind: String,
    pub what: String,
    pub label: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub meaning: String,
}

impl Event {
    /// The event a snapshot-to-snapshot change is.
    pub fn of_change(at: i64, c: &Change) -> Event {
        let kind = if c.what == "health.verdict" {
            "health"
        } else if c.what.starts_with("finding[") {
            "finding"
        } else {
            "stack"
        };
        Event {
            at,
            kind: kind.into(),
            what: c.what.clone(),
            label: c.label.clone(),
            before: c.before.clone(),
            after: c.after.clone(),
            meaning: c.meaning.clone(),
        }
    }
}

/// A snapshot's row, without the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SnapshotRow {
    pub id: i64,
    #[serde(serialize_with = "ser_time")]
    #[schemars(with = "String")]
    pub at: i64,
    pub verdict: String,
    pub summary: String,
}

/// `gpukb history`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct History {
    pub snapshots: Vec<SnapshotRow>,
    pub events: Vec<EventRow>,
}

/// A stored event with its id and acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EventRow {
    /// What `gpukb agent --ack` takes.
    pub id: i64,
    #[serde(flatten)]
    pub event: Event,
    /// When it was acknowledged (RFC 3339), or null.
    #[serde(serialize_with = "ser_opt_time")]
    #[schemars(with = "Option<String>")]
    pub acked_at: Option<i64>,
    /// The acknowledgement's note, or null.
    pub note: Option<String>,
}

impl std::ops::Deref for EventRow {
    type Target = Event;
    fn deref(&self) -> &Event {
        &self.event
    }
}

/// A kernel event of one boot not acknowledged yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveKernel {
    /// Its row in `events` (`None` for a row an old history could not match).
    pub event_id: Option<i64>,
    pub kind: String,
    pub code: Option<u32>,
    pub gpu: String,
    pub message: String,
}

/// One kernel-log event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRow {
    pub boot_id: String,
    pub seq: u64,
    pub at: i64,
    /// `xid`, `sxid`, `fallen_off_bus`, `gsp_timeout`.
    pub kind: gpukb_facts::fingerprint::KernelEventKind,
    pub code: Option<u32>,
    /// PCI address as the driver printed it, or `unknown`.
    pub gpu: String,
    pub message: String,
}

/// Kernel-log events of one boot, grouped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelCount {
    pub kind: String,
    pub code: Option<u32>,
    pub gpu: String,
    pub count: u64,
    #[serde(serialize_with = "ser_time")]
    pub first_seen: i64,
    #[serde(serialize_with = "ser_time")]
    pub last_seen: i64,
    /// The newest message.
    pub message: String,
}

/// What a retention pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub snapshots: u64,
    pub events: u64,
    pub kernel_events: u64,
}

fn ser_time<S: serde::Serializer>(t: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::time::rfc3339(*t))
}

fn ser_opt_time<S: serde::Serializer>(t: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&crate::time::rfc3339(*t)),
        None => s.serialize_none(),
    }
}

impl Store {
    /// Opens (creating when missing) the history at `path`, waiting up to
    /// [`DEFAULT_BUSY`] for other writers.
    pub fn open(path: &Path) -> Result<Store, MonitorError> {
        Store::open_with(path, DEFAULT_BUSY, true)
    }

    /// Opens an existing history without creating one (for reading).
    pub fn open_existing(path: &Path) -> Result<Store, MonitorError> {
        Store::open_with(path, DEFAULT_BUSY, false)
    }

    /// Like [`Store::open`] with an explicit lock wait; with `create` false a
    /// missing file is an error.
    #[allow(clippy::disallowed_methods)] // the history file gpukb owns, not machine state
    pub fn open_with(path: &Path, busy: Duration, create: bool) -> Result<Store, MonitorError> {
        let exists = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(MonitorError::Corrupt {
                    path: path.into(),
                    message: "it is a directory".into(),
                })
            }
            Ok(_) => true,
            Err(_) => false,
        };
        if !exists {
            if !create {
                return Err(MonitorError::Sqlite {
                    path: path.into(),
                    message: "no such history (gpukb agent writes it)".into(),
                });
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| MonitorError::Write {
                    path: dir.into(),
                    message: e.to_string(),
                })?;
            }
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if !exists {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| map_err(path, busy, e))?;
        conn.busy_timeout(busy)
            .map_err(|e| map_err(path, busy, e))?;
        let mut store = Store {
            conn,
            path: path.into(),
            busy,
        };
        store.check_existing()?;
        if store.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(MonitorError::ReadOnly {
                path: path.into(),
                message: "the file cannot be written".into(),
            });
        }
        store.configure()?;
        store.migrate()?;
        Ok(store)
    }

    fn err(&self, e: rusqlite::Error) -> MonitorError {
        map_err(&self.path, self.busy, e)
    }

    /// Refuses files that are not ours or not healthy, before writing anything.
    fn check_existing(&self) -> Result<(), MonitorError> {
        let corrupt = |message: String| MonitorError::Corrupt {
            path: self.path.clone(),
            message,
        };
        let check: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if check != "ok" {
            return Err(corrupt(format!("integrity check: {}", one_line(&check))));
        }
        let app: i64 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if app != APPLICATION_ID && (app != 0 || tables > 0) {
            return Err(MonitorError::Foreign {
                path: self.path.clone(),
                message: format!("application_id {app:#x}, {tables} schema objects"),
            });
        }
        let version = self.user_version()?;
        if version > SCHEMA_VERSION {
            return Err(MonitorError::TooNew {
                path: self.path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        Ok(())
    }

    fn user_version(&self) -> Result<i64, MonitorError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn configure(&self) -> Result<(), MonitorError> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(MonitorError::Sqlite {
                path: self.path.clone(),
                message: format!("cannot use a write-ahead log here (journal mode stays {mode})"),
            });
        }
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(|e| self.err(e))
    }

    fn migrate(&mut self) -> Result<(), MonitorError> {
        let from = self.user_version()?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| map_err(&self.path, self.busy, e))?;
            tx.execute_batch(sql)
                .map_err(|e| map_err(&self.path, self.busy, e))?;
            tx.execute_batch(&format!(
                "PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={};",
                i + 1
            ))
            .map_err(|e| map_err(&self.path, self.busy, e))?;
            tx.commit().map_err(|e| map_err(&self.path, self.busy, e))?;
        }
        Ok(())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<i64, MonitorError> {
        self.user_version()
    }

    /// Stores a snapshot and the events found since the previous one, in one
    /// transaction; counts each stack change in `stack_change:<what>`.
    /// Returns the snapshot's id.
    pub fn record(&mut self, snap: &Snapshot, events: &[Event]) -> Result<i64, MonitorError> {
        let fp = serde_json::to_string(&snap.fingerprint).map_err(|e| MonitorError::Sqlite {
            path: self.path.clone(),
            message: format!("cannot encode the fingerprint: {e}"),
        })?;
        let dg = serde_json::to_string(&snap.diagnosis).map_err(|e| MonitorError::Sqlite {
            path: self.path.clone(),
            message: format!("cannot encode the diagnosis: {e}"),
        })?;
        let (path, busy) = (self.path.clone(), self.busy);
        let e = |e| map_err(&path, busy, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let fp_id = blob(&tx, "fingerprint", &fp).map_err(e)?;
        let dg_id = blob(&tx, "diagnosis", &dg).map_err(e)?;
        tx.execute(
            "INSERT INTO snapshots(at, verdict, summary, input, fingerprint, diagnosis) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                snap.at,
                verdict_str(snap.diagnosis.verdict),
                snap.diagnosis.summary,
                snap.diagnosis.input,
                fp_id,
                dg_id
            ],
        )
        .map_err(e)?;
        let id = tx.last_insert_rowid();
        for ev in events {
            insert_event(&tx, ev, Some(id)).map_err(e)?;
            if ev.kind == "stack" {
                bump(&tx, &format!("stack_change:{}", stack_group(&ev.what))).map_err(e)?;
            }
        }
        tx.commit().map_err(e)?;
        Ok(id)
    }

    /// The newest snapshot's id.
    pub fn latest_id(&self) -> Result<Option<i64>, MonitorError> {
        self.conn
            .query_row("SELECT max(id) FROM snapshots", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// The newest snapshot.
    pub fn latest(&self) -> Result<Option<Snapshot>, MonitorError> {
        self.latest_id()?.map(|id| self.snapshot(id)).transpose()
    }

    /// Snapshot `id`, decoded.
    pub fn snapshot(&self, id: i64) -> Result<Snapshot, MonitorError> {
        let row: Option<(i64, String, String)> = self
            .conn
            .query_row(
                "SELECT s.at, f.json, d.json FROM snapshots s JOIN blobs f ON f.id = s.fingerprint JOIN blobs d ON d.id = s.diagnosis WHERE s.id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let (at, fp, dg) = row.ok_or(MonitorError::NoSnapshot(id))?;
        let bad = |message: String| MonitorError::BadSnapshot { id, message };
        Ok(Snapshot {
            at,
            fingerprint: gpukb_facts::read::fingerprint_from_json(fp.as_bytes())
                .map_err(|e| bad(format!("fingerprint: {e}")))?,
            diagnosis: serde_json::from_str(&dg).map_err(|e| bad(format!("diagnosis: {e}")))?,
        })
    }

    /// Snapshots and events at or after `since` (Unix seconds), oldest first.
    pub fn history(&self, since: Option<i64>) -> Result<History, MonitorError> {
        let since = since.unwrap_or(i64::MIN);
        let mut st = self
            .conn
            .prepare("SELECT id, at, verdict, summary FROM snapshots WHERE at >= ?1 ORDER BY id")
            .map_err(|e| self.err(e))?;
        let snapshots = st
            .query_map([since], |r| {
                Ok(SnapshotRow {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    verdict: r.get(2)?,
                    summary: r.get(3)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(e))?;
        let mut st = self
            .conn
            .prepare("SELECT at, kind, what, label, before, after, meaning, id, acked_at, note FROM events WHERE at >= ?1 ORDER BY id")
            .map_err(|e| self.err(e))?;
        let events = st
            .query_map([since], |r| {
                Ok(EventRow {
                    event: Event {
                        at: r.get(0)?,
                        kind: r.get(1)?,
                        what: r.get(2)?,
                        label: r.get(3)?,
                        before: r.get(4)?,
                        after: r.get(5)?,
                        meaning: r.get(6)?,
                    },
                    id: r.get(7)?,
                    acked_at: r.get(8)?,
                    note: r.get(9)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(e))?;
        Ok(History { snapshots, events })
    }

    /// Stores events that belong to no snapshot (the canary's), in one
    /// transaction.
    pub fn record_events(&mut self, events: &[Event]) -> Result<(), MonitorError> {
        if events.is_empty() {
            return Ok(());
        }
        let (path, busy) = (self.path.clone(), self.busy);
        let e = |e| map_err(&path, busy, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        for ev in events {
            insert_event(&tx, ev, None).map_err(e)?;
            bump(&tx, &format!("{}:{}", ev.kind, ev.what)).map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    /// The `after` of the newest event of `kind` about `what`.
    pub fn last_after(&self, kind: &str, what: &str) -> Result<Option<String>, MonitorError> {
        self.conn
            .query_row(
                "SELECT after FROM events WHERE kind = ?1 AND what = ?2 ORDER BY id DESC LIMIT 1",
                [kind, what],
                |r| r.get::<_, Option<String>>(0),
            )
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(self.err(e)),
            })
    }

    /// Stores kernel-log events; a (boot id, sequence number) already stored
    /// is skipped, so re-reading the ring buffer after a restart does not
    /// count twice. Each new one is also an event (`kind = kernel`). Returns
    /// the ones that were new.
    pub fn record_kernel(
        &mut self,
        rows: &[KernelRow],
        meaning: &dyn Fn(&KernelRow, u64) -> String,
    ) -> Result<Vec<KernelRow>, MonitorError> {
        let (path, busy) = (self.path.clone(), self.busy);
        let e = |e| map_err(&path, busy, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut fresh = Vec::new();
        for k in rows {
            let n = tx
                .execute(
                    "INSERT OR IGNORE INTO kernel_events(boot_id, seq, at, kind, code, gpu, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![k.boot_id, k.seq as i64, k.at, k.kind.as_str(), k.code, k.gpu, k.message],
                )
                .map_err(e)?;
            if n == 0 {
                continue;
            }
            // In how many earlier boots the same event was seen on this GPU:
            // a reboot did not clear it (escalation, as GPUd does).
            let earlier: i64 = tx
                .query_row(
                    "SELECT count(DISTINCT boot_id) FROM kernel_events WHERE kind = ?1 AND code IS ?2 AND gpu = ?3 AND boot_id != ?4",
                    params![k.kind.as_str(), k.code, k.gpu, k.boot_id],
                    |r| r.get(0),
                )
                .map_err(e)?;
            let what = match k.code {
                Some(c) => format!("{}[{}].{c}", k.kind, k.gpu),
                None => format!("{}[{}]", k.kind, k.gpu),
            };
            tx.execute(
                "INSERT INTO events(at, snapshot, kind, what, label, before, after, meaning) VALUES (?1, NULL, 'kernel', ?2, ?3, NULL, ?4, ?5)",
                params![k.at, what, "kernel log", k.message, meaning(k, earlier as u64)],
            )
            .map_err(e)?;
            let event_id = tx.last_insert_rowid();
            tx.execute(
                "UPDATE kernel_events SET event_id = ?1 WHERE boot_id = ?2 AND seq = ?3",
                params![event_id, k.boot_id, k.seq as i64],
            )
            .map_err(e)?;
            fresh.push(k.clone());
        }
        tx.commit().map_err(e)?;
        Ok(fresh)
    }

    /// Acknowledges event `id` at `now` with `note`; `false` when there is no
    /// such event. Acknowledging again replaces the time and the note.
    pub fn ack(&mut self, id: i64, note: Option<&str>, now: i64) -> Result<bool, MonitorError> {
        let n = self
            .conn
            .execute(
                "UPDATE events SET acked_at = ?1, note = ?2 WHERE id = ?3",
                params![now, note, id],
            )
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    /// The event `id` (for the answer to an ack).
    pub fn event(&self, id: i64) -> Result<Option<EventRow>, MonitorError> {
        self.conn
            .query_row(
                "SELECT at, kind, what, label, before, after, meaning, id, acked_at, note FROM events WHERE id = ?1",
                [id],
                |r| {
                    Ok(EventRow {
                        event: Event {
                            at: r.get(0)?,
                            kind: r.get(1)?,
                            what: r.get(2)?,
                            label: r.get(3)?,
                            before: r.get(4)?,
                            after: r.get(5)?,
                            meaning: r.get(6)?,
                        },
                        id: r.get(7)?,
                        acked_at: r.get(8)?,
                        note: r.get(9)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Kernel-log events of boot `boot_id` that were not acknowledged, in order.
    pub fn kernel_active(&self, boot_id: &str) -> Result<Vec<ActiveKernel>, MonitorError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT k.event_id, k.kind, k.code, k.gpu, k.message FROM kernel_events k
                   LEFT JOIN events e ON e.id = k.event_id
                  WHERE k.boot_id = ?1 AND e.acked_at IS NULL ORDER BY k.seq",
            )
            .map_err(|e| self.err(e))?;
        st.query_map([boot_id], |r| {
            Ok(ActiveKernel {
                event_id: r.get(0)?,
                kind: r.get(1)?,
                code: r.get(2)?,
                gpu: r.get(3)?,
                message: r.get(4)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| self.err(e))
    }

    /// Every (kind, code, GPU) of kernel-log events recorded in boots other than
    /// `boot_id`: what a reboot did not cure when it comes again.
    pub fn kernel_in_other_boots(
        &self,
        boot_id: &str,
    ) -> Result<Vec<(String, Option<u32>, String)>, MonitorError> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT kind, code, gpu FROM kernel_events WHERE boot_id != ?1")
            .map_err(|e| self.err(e))?;
        st.query_map([boot_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(e))
    }

    /// The history's event id of kernel event (boot, seq).
    pub fn kernel_event_id(&self, boot_id: &str, seq: u64) -> Result<Option<i64>, MonitorError> {
        self.conn
            .query_row(
                "SELECT event_id FROM kernel_events WHERE boot_id = ?1 AND seq = ?2",
                params![boot_id, seq as i64],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    /// Kernel-log events of boot `boot_id`, grouped by (kind, code, GPU).
    pub fn kernel_counts(&self, boot_id: &str) -> Result<Vec<KernelCount>, MonitorError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT kind, code, gpu, count(*), min(at), max(at),
                        (SELECT message FROM kernel_events k2 WHERE k2.boot_id = k.boot_id AND k2.kind = k.kind
                           AND k2.code IS k.code AND k2.gpu = k.gpu ORDER BY seq DESC LIMIT 1)
                 FROM kernel_events k WHERE boot_id = ?1 GROUP BY kind, code, gpu ORDER BY kind, code, gpu",
            )
            .map_err(|e| self.err(e))?;
        st.query_map([boot_id], |r| {
            Ok(KernelCount {
                kind: r.get(0)?,
                code: r.get(1)?,
                gpu: r.get(2)?,
                count: r.get::<_, i64>(3)? as u64,
                first_seen: r.get(4)?,
                last_seen: r.get(5)?,
                message: r.get(6)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| self.err(e))
    }

    /// Counters whose name starts with `prefix` (the prefix removed).
    pub fn counters(&self, prefix: &str) -> Result<Vec<(String, u64)>, MonitorError> {
        let mut st = self
            .conn
            .prepare("SELECT name, value FROM counters WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name")
            .map_err(|e| self.err(e))?;
        st.query_map([prefix], |r| {
            Ok((
                r.get::<_, String>(0)?[prefix.len()..].to_string(),
                r.get::<_, i64>(1)? as u64,
            ))
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| self.err(e))
    }

    /// Bytes the live pages take (the file may be larger: freed pages are reused).
    pub fn used_bytes(&self) -> Result<u64, MonitorError> {
        let q = |sql: &str| -> Result<i64, MonitorError> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        let (pages, free, size) = (
            q("PRAGMA page_count")?,
            q("PRAGMA freelist_count")?,
            q("PRAGMA page_size")?,
        );
        Ok(((pages - free).max(0) * size) as u64)
    }

    /// Removes what is older than `max_age` (before `now`), then the oldest
    /// snapshots until the live data fit in `max_bytes`. The newest snapshot
    /// always stays.
    pub fn retain(
        &mut self,
        now: i64,
        max_age: Duration,
        max_bytes: u64,
    ) -> Result<Pruned, MonitorError> {
        let cutoff = now.saturating_sub(max_age.as_secs() as i64);
        let mut pruned = Pruned::default();
        {
            let (path, busy) = (self.path.clone(), self.busy);
            let e = |e| map_err(&path, busy, e);
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(e)?;
            pruned.snapshots += tx
                .execute(
                    "DELETE FROM snapshots WHERE at < ?1 AND id < (SELECT max(id) FROM snapshots)",
                    [cutoff],
                )
                .map_err(e)? as u64;
            pruned.events += tx
                .execute("DELETE FROM events WHERE at < ?1", [cutoff])
                .map_err(e)? as u64;
            pruned.kernel_events += tx
                .execute("DELETE FROM kernel_events WHERE at < ?1", [cutoff])
                .map_err(e)? as u64;
            drop_orphans(&tx).map_err(e)?;
            tx.commit().map_err(e)?;
        }
        while self.used_bytes()? > max_bytes {
            let (path, busy) = (self.path.clone(), self.busy);
            let e = |e| map_err(&path, busy, e);
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(e)?;
            let total: i64 = tx
                .query_row("SELECT count(*) FROM snapshots", [], |r| r.get(0))
                .map_err(e)?;
            if total <= 1 {
                break;
            }
            // The oldest tenth (at least one), never the newest.
            let n = (total / 10).max(1).min(total - 1);
            let oldest_kept: i64 = tx
                .query_row(
                    "SELECT id FROM snapshots ORDER BY id LIMIT 1 OFFSET ?1",
                    [n],
                    |r| r.get(0),
                )
                .map_err(e)?;
            let oldest_at: i64 = tx
                .query_row(
                    "SELECT at FROM snapshots WHERE id = ?1",
                    [oldest_kept],
                    |r| r.get(0),
                )
                .map_err(e)?;
            pruned.snapshots += tx
                .execute("DELETE FROM snapshots WHERE id < ?1", [oldest_kept])
                .map_err(e)? as u64;
            pruned.events += tx
                .execute("DELETE FROM events WHERE at < ?1", [oldest_at])
                .map_err(e)? as u64;
            pruned.kernel_events += tx
                .execute("DELETE FROM kernel_events WHERE at < ?1", [oldest_at])
                .map_err(e)? as u64;
            drop_orphans(&tx).map_err(e)?;
            tx.commit().map_err(e)?;
        }
        Ok(pruned)
    }
}

/// Stores `json`, reusing the newest snapshot's blob of that column when it
/// is identical (most snapshots repeat the previous one).
fn blob(tx: &rusqlite::Transaction<'_>, column: &str, json: &str) -> rusqlite::Result<i64> {
    let sql = format!(
        "SELECT b.id FROM snapshots s JOIN blobs b ON b.id = s.{column} WHERE b.json = ?1 ORDER BY s.id DESC LIMIT 1"
    );
    if let Some(id) = tx.query_row(&sql, [json], |r| r.get(0)).optional()? {
        return Ok(id);
    }
    tx.execute("INSERT INTO blobs(json) VALUES (?1)", [json])?;
    Ok(tx.last_insert_rowid())
}

fn drop_orphans(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM blobs WHERE id NOT IN (SELECT fingerprint FROM snapshots UNION SELECT diagnosis FROM snapshots)",
        [],
    )?;
    Ok(())
}

/// Inserts one event, filed under snapshot `snapshot` (none for the canary's).
fn insert_event(
    tx: &rusqlite::Transaction<'_>,
    ev: &Event,
    snapshot: Option<i64>,
) -> rusqlite::Result<usize> {
    tx.execute(
        "INSERT INTO events(at, snapshot, kind, what, label, before, after, meaning) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![ev.at, snapshot, ev.kind, ev.what, ev.label, ev.before, ev.after, ev.meaning],
    )
}

fn bump(tx: &rusqlite::Transaction<'_>, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO counters(name, value) VALUES (?1, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1",
        [name],
    )?;
    Ok(())
}

/// The `what` label of `gpukb_stack_change_total`: the fact key without the
/// per-instance parts (`python[/opt/venv].torch.version` → `python.torch.version`,
/// `gpu[1].uuid` → `gpu.uuid`), so the label set stays small.
pub fn stack_group(what: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in what.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.chars().take(200).collect()
}

fn map_err(path: &Path, busy: Duration, e: rusqlite::Error) -> MonitorError {
    let path = path.to_path_buf();
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        let message = msg.clone().unwrap_or_else(|| f.to_string());
        return match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => MonitorError::Busy {
                path,
                seconds: busy.as_secs_f64(),
            },
            ErrorCode::ReadOnly => MonitorError::ReadOnly { path, message },
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
                MonitorError::Corrupt { path, message }
            }
            ErrorCode::PermissionDenied => MonitorError::ReadOnly { path, message },
            _ => MonitorError::Sqlite { path, message },
        };
    }
    MonitorError::Sqlite {
        path,
        message: one_line(&e.to_string()),
    }
}
