//! The capture format: a directory that records everything one fingerprint
//! observed, so another machine can replay it exactly.
//!
//! ```text
//! DIR/capture.json   the journal: every question asked and its outcome
//! DIR/root/...       the files read, at their real paths
//! ```
#![allow(clippy::disallowed_methods)] // part of the host seam

use super::{paths, CommandOutput, DirEntry, EnvRegistry, HostError};
use crate::elf::ElfInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Version of the capture format written by this gpukb.
pub const CAPTURE_FORMAT: u32 = 1;

/// The outcome of one observation, as stored in a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Recorded<T> {
    Ok(T),
    Absent,
    Failed(HostError),
}

impl<T: Clone> Recorded<T> {
    pub(super) fn from_result(r: &Result<Option<T>, HostError>) -> Self {
        match r {
            Ok(Some(v)) => Recorded::Ok(v.clone()),
            Ok(None) => Recorded::Absent,
            Err(e) => Recorded::Failed(e.clone()),
        }
    }
    pub(super) fn into_result(self) -> Result<Option<T>, HostError> {
        match self {
            Recorded::Ok(v) => Ok(Some(v)),
            Recorded::Absent => Ok(None),
            Recorded::Failed(e) => Err(e),
        }
    }
}

/// Everything a capture holds except file contents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// Unknown fields are ignored, not refused: within one capture format a newer
// gpukb may add fields (cli/schemas/README.md); anything incompatible bumps
// CAPTURE_FORMAT, which `load` checks first.
pub struct Journal {
    pub format: u32,
    pub gpukb_version: String,
    /// When the capture was taken (UTC, RFC 3339); absent in captures written
    /// before gpukb recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_at: Option<String>,
    /// What `gpukb capture --redact` replaced (absent: not redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// File reads: `Ok(size)` when the contents are under `root/`.
    pub files: BTreeMap<String, Recorded<u64>>,
    pub lists: BTreeMap<String, Recorded<Vec<DirEntry>>>,
    pub canon: BTreeMap<String, Recorded<String>>,
    pub elf: BTreeMap<String, Recorded<ElfInfo>>,
    pub commands: BTreeMap<String, Recorded<CommandOutput>>,
    pub answers: BTreeMap<String, Recorded<serde_json::Value>>,
    pub env: BTreeMap<String, String>,
}

/// A whole capture in memory: the journal and the contents of the files read
/// (by their path on the captured machine).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureData {
    pub journal: Journal,
    pub files: BTreeMap<String, Vec<u8>>,
}

impl CaptureData {
    /// Reads a capture directory: `capture.json` and every file it says is under `root/`.
    pub fn read(dir: &Path) -> Result<CaptureData, HostError> {
        let journal = Journal::load(dir)?;
        let root = dir.join("root");
        let mut files = BTreeMap::new();
        for (path, rec) in &journal.files {
            if let Recorded::Ok(size) = rec {
                if path.split('/').any(|c| c == "..") {
                    return Err(HostError::Parse {
                        path: dir.join("capture.json").display().to_string(),
                        message: format!("file path {path:?} leaves the capture"),
                    });
                }
                let p = paths::under_root(&root, path);
                let bytes = std::fs::read(&p).map_err(|e| HostError::Io {
                    path: p.display().to_string(),
                    message: e.to_string(),
                })?;
                if bytes.len() as u64 != *size {
                    return Err(HostError::Parse {
                        path: p.display().to_string(),
                        message: format!(
                            "{} bytes, the journal says {size}: the capture was changed after it was written",
                            bytes.len()
                        ),
                    });
                }
                files.insert(path.clone(), bytes);
            }
        }
        Ok(CaptureData { journal, files })
    }

    /// Writes `capture.json` and `root/` into `dir` (which must exist).
    pub fn write(&self, dir: &Path) -> Result<(), HostError> {
        let io = |p: &Path, e: std::io::Error| HostError::Io {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        let root = dir.join("root");
        std::fs::create_dir_all(&root).map_err(|e| io(&root, e))?;
        for (path, bytes) in &self.files {
            let dest = paths::under_root(&root, path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&dest, bytes).map_err(|e| io(&dest, e))?;
        }
        let text = serde_json::to_string_pretty(&self.journal).map_err(|e| HostError::Parse {
            path: "capture.json".into(),
            message: e.to_string(),
        })?;
        let p = dir.join("capture.json");
        std::fs::write(&p, text).map_err(|e| io(&p, e))
    }
}

/// Now, in UTC, as RFC 3339 (`2026-12-01T12:44:55Z`).
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC (civil-from-days, H. Hinnant).
pub fn utc_rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

impl Journal {
    pub(super) fn load(dir: &Path) -> Result<Journal, HostError> {
        use std::io::Read;
        let p = dir.join("capture.json");
        let where_ = p.display().to_string();
        let io = |message: String| HostError::Io {
            path: where_.clone(),
            message,
        };
        let meta = std::fs::metadata(&p).map_err(|e| {
            io(format!(
                "{e} (is this a directory written by `gpukb capture`?)"
            ))
        })?;
        if !meta.is_file() {
            return Err(io(
                "is not a regular file (is this a directory written by `gpukb capture`?)".into(),
            ));
        }
        let mut text = String::new();
        std::fs::File::open(&p)
            .and_then(|f| f.take(MAX_JOURNAL_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| io(e.to_string()))?;
        if text.len() as u64 > MAX_JOURNAL_BYTES {
            return Err(HostError::TooLarge {
                path: where_,
                size: text.len() as u64,
            });
        }
        let parse = |message: String| HostError::Parse {
            path: where_.clone(),
            message,
        };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| parse(format!("not JSON: {e}")))?;
        // The format first, so a newer capture says so rather than "missing field".
        match v.get("format").and_then(serde_json::Value::as_u64) {
            Some(f) if f == u64::from(CAPTURE_FORMAT) => {}
            Some(f) if f > u64::from(CAPTURE_FORMAT) => {
                return Err(parse(format!(
                    "capture format {f} is newer than this gpukb (reads format {CAPTURE_FORMAT}): upgrade gpukb"
                )))
            }
            Some(f) => {
                return Err(parse(format!(
                    "capture format {f} is not supported (this gpukb reads format {CAPTURE_FORMAT})"
                )))
            }
            None => return Err(parse("no \"format\" number: not a capture written by `gpukb capture`".into())),
        }
        serde_json::from_value(v).map_err(|e| parse(e.to_string()))
    }
}

/// The largest `capture.json` read.
pub(super) const MAX_JOURNAL_BYTES: u64 = 64 << 20;

#[derive(Debug, Default)]
pub(super) struct Recorder {
    pub files: BTreeMap<String, Recorded<Vec<u8>>>,
    pub lists: BTreeMap<String, Recorded<Vec<DirEntry>>>,
    pub canon: BTreeMap<String, Recorded<String>>,
    pub elf: BTreeMap<String, Recorded<ElfInfo>>,
    pub commands: BTreeMap<String, Recorded<CommandOutput>>,
    pub answers: BTreeMap<String, Recorded<serde_json::Value>>,
}

impl Recorder {
    pub(super) fn file(&mut self, path: &str, r: &Result<Option<Vec<u8>>, HostError>) {
        self.files
            .insert(path.to_string(), Recorded::from_result(r));
    }

    /// Everything recorded, as a capture taken now.
    pub(super) fn to_capture(&self, env: &EnvRegistry) -> CaptureData {
        let mut files = BTreeMap::new();
        let mut contents = BTreeMap::new();
        for (path, rec) in &self.files {
            let stored = match rec {
                Recorded::Ok(bytes) => {
                    contents.insert(path.clone(), bytes.clone());
                    Recorded::Ok(bytes.len() as u64)
                }
                Recorded::Absent => Recorded::Absent,
                Recorded::Failed(e) => Recorded::Failed(e.clone()),
            };
            files.insert(path.clone(), stored);
        }
        let journal = Journal {
            format: CAPTURE_FORMAT,
            gpukb_version: env!("CARGO_PKG_VERSION").to_string(),
            taken_at: Some(now_utc()),
            redacted: None,
            files,
            lists: self.lists.clone(),
            canon: self.canon.clone(),
            elf: self.elf.clone(),
            commands: self.commands.clone(),
            answers: self.answers.clone(),
            env: env.all().clone(),
        };
        CaptureData {
            journal,
            files: contents,
        }
    }
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn rfc3339_from_epoch_seconds() {
        assert_eq!(super::utc_rfc3339(0), "1970-01-01T00:00:00Z");
        // 2026-12-01T12:44:55Z, checked with `date -u -d @1796129095`.
        assert_eq!(super::utc_rfc3339(1_796_129_095), "2026-12-01T12:44:55Z");
        assert_eq!(super::utc_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
