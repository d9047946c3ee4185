//! The kernel log, for what the NVIDIA driver reports there: NVRM Xid and
//! SXid events, "fallen off the bus", GSP RPC timeouts.
//!
//! The parsers (records, what the driver reports in them) live in the
//! agent ([`gpukb_agent::parse::kernel_log`]), which the doctor reads the same
//! log with; this module streams the log for the daemon.
//!
//! Records come from `/dev/kmsg` (one record per `read`, format
//! `PRI,SEQ,TS_USEC,FLAGS;MESSAGE`, Documentation/ABI/testing/dev-kmsg),
//! opened non-blocking so reading stops at the end of the ring buffer. A
//! recorded file of such lines is read the same way (tests, offline). When
//! `/dev/kmsg` cannot be read (no `CAP_SYSLOG`, a container), `journalctl
//! -k` is asked instead, under a timeout. Each event is keyed by (boot id,
//! sequence number): the journal's records are keyed by their kernel
//! timestamp in µs instead, so re-reading the same ring buffer after a
//! restart never counts an event twice.
//!
//! Reset semantics: counts are per boot (a reboot starts them at 0; the ring
//! buffer of the new boot holds none of the old events). A driver reload
//! does not clear the kernel log, so its events stay counted until reboot.

pub use gpukb_agent::collect::{boot_id, read_journal};
use gpukb_agent::host::Host;
pub use gpukb_agent::parse::kernel_log::{classify, events, parse_record, Nvrm, Record};
use std::time::Duration;

/// Reads `/dev/kmsg` (or a file of recorded kmsg lines) from the start of
/// the ring buffer to its end, at most `max` records, giving up after
/// `deadline`.
#[allow(clippy::disallowed_methods)] // a character device streamed record by record; the host seam reads whole files
pub fn read_kmsg(
    path: &std::path::Path,
    max: usize,
    deadline: Duration,
) -> Result<Vec<Record>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let is_device = f.metadata().map(|m| !m.is_file()).unwrap_or(false);
    let start = std::time::Instant::now();
    let mut out = Vec::new();
    if !is_device {
        // A recorded file: lines, capped.
        let mut text = String::new();
        f.take(64 << 20)
            .read_to_string(&mut text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        out.extend(text.lines().filter_map(parse_record).take(max));
        return Ok(out);
    }
    let mut buf = vec![0u8; 8192];
    while out.len() < max && start.elapsed() < deadline {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if let Some(r) = parse_record(&String::from_utf8_lossy(&buf[..n])) {
                    out.push(r);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: the record we were about to read was overwritten; go on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok(out)
}

/// When this boot started (Unix seconds), from `/proc/uptime`.
pub fn boot_time(host: &Host, now: i64) -> i64 {
    let up = host
        .read_string("/proc/uptime")
        .ok()
        .flatten()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|u| u.parse::<f64>().ok())
        });
    match up {
        Some(u) => now - u as i64,
        None => now,
    }
}
