//! The monitor's typed errors. Every message is one line a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The history file exists but is not a readable SQLite database (it is
    /// left exactly as it is).
    #[error("{path}: not a usable gpukb history database ({message}); it was left untouched: move it away or pass another --db")]
    Corrupt { path: PathBuf, message: String },
    /// The file is a SQLite database of something else.
    #[error(
        "{path}: a SQLite database that is not a gpukb history ({message}); it was left untouched"
    )]
    Foreign { path: PathBuf, message: String },
    /// Written by a newer gpukb (schema version).
    #[error("{path}: history schema {found} is newer than this gpukb understands ({supported}); upgrade gpukb or pass another --db")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// The database or its directory cannot be written.
    #[error("{path}: the history database is read-only ({message})")]
    ReadOnly { path: PathBuf, message: String },
    /// Another process held the database locked for longer than the wait.
    #[error("{path}: the history database stayed locked by another process for more than {seconds:.0} s")]
    Busy { path: PathBuf, seconds: f64 },
    /// Any other SQLite failure.
    #[error("{path}: {message}")]
    Sqlite { path: PathBuf, message: String },
    /// Writing a file (the textfile) failed.
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    /// No snapshot with this id.
    #[error("no snapshot @{0} in the history (gpukb history lists them)")]
    NoSnapshot(i64),
    /// A stored snapshot could not be decoded.
    #[error("snapshot @{id}: {message}")]
    BadSnapshot { id: i64, message: String },
    /// A duration such as `30s`, `5m` did not parse.
    #[error("{0}")]
    BadDuration(String),
    /// A listen address did not parse or could not be bound.
    #[error("{0}")]
    Listen(String),
    /// Something the daemon needs could not be set up.
    #[error("{0}")]
    Setup(String),
    /// The knowledge base could not be opened.
    #[error("knowledge base: {0}")]
    Kb(String),
}
