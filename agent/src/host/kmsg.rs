//! Reading the kernel log's ring buffer (`/dev/kmsg`) through the seam: one
//! record per `read` (Documentation/ABI/testing/dev-kmsg), opened
//! non-blocking so reading stops at the end of the buffer. Only the records
//! that may be NVIDIA driver reports are kept (and so recorded in a capture):
//! the rest of the log is none of gpukb's business.
#![allow(clippy::disallowed_methods)] // part of the host seam

use super::{io_err, paths, HostError};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// Most records read from one ring buffer (a full buffer holds ~10^4).
const MAX_RECORDS: usize = 1 << 20;

/// What one read of the kernel log kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KmsgRecords {
    /// Records read in all.
    pub read: u64,
    /// The raw records kept (`PRI,SEQ,TS_USEC,FLAGS;MESSAGE`), those that may be NVIDIA driver reports.
    pub kept: Vec<String>,
}

/// Reads `<root>/dev/kmsg` to the end of the ring buffer, keeping the
/// records `keep` accepts, giving up after `budget`. A regular file there (a
/// recorded log, tests) is read as lines.
pub(super) fn read(
    root: &Path,
    keep: fn(&str) -> bool,
    budget: Duration,
) -> Result<Option<KmsgRecords>, HostError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = "/dev/kmsg";
    let full = paths::under_root(root, shown);
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(super::O_NONBLOCK)
        .open(&full)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(shown, &e)),
    };
    let is_file = f.metadata().map(|m| m.is_file()).unwrap_or(false);
    let mut out = KmsgRecords {
        read: 0,
        kept: Vec::new(),
    };
    if is_file {
        let mut text = String::new();
        f.take(super::MAX_READ_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| io_err(shown, &e))?;
        for l in text.lines().take(MAX_RECORDS) {
            out.read += 1;
            if keep(l) {
                out.kept.push(l.to_string());
            }
        }
        return Ok(Some(out));
    }
    let start = Instant::now();
    let mut buf = vec![0u8; 8192];
    while (out.read as usize) < MAX_RECORDS && start.elapsed() < budget {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.read += 1;
                let rec = String::from_utf8_lossy(&buf[..n]);
                if keep(&rec) {
                    // A record's continuation lines (` KEY=value`) are dropped.
                    let first = rec.lines().next().unwrap_or("");
                    out.kept.push(first.to_string());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: the record about to be read was overwritten; go on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(shown, &e)),
        }
    }
    Ok(Some(out))
}
