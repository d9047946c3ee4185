//! The kernel log, for what the NVIDIA driver reports there: NVRM Xid and
//! SXid events, "fallen off the bus", GSP RPC timeouts.
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

use gpukb_agent::host::Host;
use regex::Regex;
use std::sync::OnceLock;
use std::time::Duration;

/// One kernel-log record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    /// Microseconds since boot.
    pub ts_usec: u64,
    pub message: String,
}

/// What the driver reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nvrm {
    /// `xid`, `sxid`, `fallen_off_bus`, `gsp_timeout`.
    pub kind: &'static str,
    pub code: Option<u32>,
    /// The device as the driver names it (`PCI:0000:3b:00`, `0000:b3:00.0`, `GPU6`), or `unknown`.
    pub gpu: String,
}

/// Parses one `/dev/kmsg` record (`6,1234,5678,-;text`); continuation lines
/// (starting with a space: key=value pairs) and malformed lines are `None`.
pub fn parse_record(line: &str) -> Option<Record> {
    let (head, message) = line.split_once(';')?;
    let mut f = head.split(',');
    let _prio: u32 = f.next()?.trim().parse().ok()?;
    let seq: u64 = f.next()?.parse().ok()?;
    let ts_usec: u64 = f.next()?.parse().ok()?;
    Some(Record {
        seq,
        ts_usec,
        message: message.trim_end_matches('\n').to_string(),
    })
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid pattern"))
}

/// What a record says about an NVIDIA GPU, if anything. `previous` is the
/// text of the few records before it (the driver prints "The NVIDIA GPU
/// <addr> ... has fallen off the bus" over several records).
pub fn classify(message: &str, previous: Option<&str>) -> Option<Nvrm> {
    static XID: OnceLock<Regex> = OnceLock::new();
    static GPU_ADDR: OnceLock<Regex> = OnceLock::new();
    static GPU_N: OnceLock<Regex> = OnceLock::new();
    // Nearly every record is about something else: two substring searches
    // decide that before any regex runs (a full ring buffer is ~10^4 records).
    if !message.contains("NVRM") && !message.contains("fallen off the bus") {
        return None;
    }
    let xid = re(&XID, r"NVRM: (S?Xid) \((PCI:[0-9A-Fa-f:.]+)\): (\d+)");
    if let Some(c) = xid.captures(message) {
        return Some(Nvrm {
            kind: if &c[1] == "SXid" { "sxid" } else { "xid" },
            code: c[3].parse().ok(),
            gpu: c[2].to_string(),
        });
    }
    let addr = re(
        &GPU_ADDR,
        r"GPU (?:at )?(?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)",
    );
    let gpu_of = |s: &str| addr.captures(s).map(|c| c[1].to_string());
    if message.contains("fallen off the bus") {
        let gpu = gpu_of(message)
            .or_else(|| previous.and_then(gpu_of))
            .unwrap_or_else(|| "unknown".into());
        return Some(Nvrm {
            kind: "fallen_off_bus",
            code: None,
            gpu,
        });
    }
    let lower = message.to_ascii_lowercase();
    if lower.contains("gsp timeout")
        || lower.contains("gsp rpc timeout")
        || lower.contains("waiting for rpc from gsp")
    {
        let n = re(&GPU_N, r"NVRM: (GPU\d+) ");
        let gpu = gpu_of(message)
            .or_else(|| n.captures(message).map(|c| c[1].to_string()))
            .unwrap_or_else(|| "unknown".into());
        return Some(Nvrm {
            kind: "gsp_timeout",
            code: None,
            gpu,
        });
    }
    None
}

/// The NVIDIA events among `records`, in order.
pub fn events(records: &[Record]) -> Vec<(Record, Nvrm)> {
    let mut out = Vec::new();
    let mut recent: std::collections::VecDeque<&str> = Default::default();
    for r in records {
        // Only a "fallen off the bus" record looks back (for the GPU's address).
        let prev: String = if r.message.contains("fallen off the bus") {
            recent.iter().rev().copied().collect::<Vec<_>>().join("\n")
        } else {
            String::new()
        };
        if let Some(n) = classify(
            &r.message,
            Some(&prev).filter(|p| !p.is_empty()).map(|p| p.as_str()),
        ) {
            // One "fallen off the bus" report spans several records: count it once.
            let dup = n.kind == "fallen_off_bus"
                && out.last().is_some_and(|(p, q): &(Record, Nvrm)| {
                    q.kind == n.kind && q.gpu == n.gpu && r.seq.abs_diff(p.seq) <= 3
                });
            if !dup {
                out.push((r.clone(), n));
            }
        }
        recent.push_back(&r.message);
        if recent.len() > 3 {
            recent.pop_front();
        }
    }
    out
}

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

/// The kernel log from journald (`journalctl -k -b -o json`), through the
/// host's command runner (it has a timeout). Records are keyed by their
/// kernel timestamp in µs.
pub fn read_journal(host: &Host) -> Result<Vec<Record>, String> {
    let base = ["journalctl", "-k", "-b", "-o", "json", "--no-pager", "-q"];
    let grep = [&base[..], &["--grep", "NVRM|fallen off the bus"]].concat();
    let mut out = host
        .run(&grep)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "journalctl is not installed".to_string())?;
    if out.stderr.contains("pattern matching") {
        // Built without PCRE2: read the newest records and filter here.
        let all = [&base[..], &["-n", "20000"]].concat();
        out = host
            .run(&all)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "journalctl is not installed".to_string())?;
    }
    if !out.success() && out.stdout.trim().is_empty() {
        // journalctl --grep exits 1 when nothing matched.
        if out.status == Some(1) && out.stderr.trim().is_empty() {
            return Ok(Vec::new());
        }
        return Err(format!("journalctl -k: {}", out.stderr.trim()));
    }
    let mut v = Vec::new();
    for line in out.stdout.lines() {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let ts = j
            .get("_SOURCE_MONOTONIC_TIMESTAMP")
            .or_else(|| j.get("__MONOTONIC_TIMESTAMP"))
            .and_then(|t| t.as_str())
            .and_then(|t| t.parse::<u64>().ok());
        let msg = j.get("MESSAGE").and_then(|m| m.as_str());
        if let (Some(ts), Some(msg)) = (ts, msg) {
            v.push(Record {
                seq: ts,
                ts_usec: ts,
                message: msg.to_string(),
            });
        }
    }
    Ok(v)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id(host: &Host) -> Option<String> {
    host.read_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_continuations() {
        let r = parse_record("4,1523,19221234,-;NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>'\n")
            .unwrap();
        assert_eq!((r.seq, r.ts_usec), (1523, 19221234));
        assert!(r.message.starts_with("NVRM: Xid"));
        assert_eq!(parse_record(" SUBSYSTEM=pci"), None);
        assert_eq!(parse_record("garbage"), None);
        assert_eq!(parse_record("x,1,2,-;m"), None);
    }

    #[test]
    fn sxid_is_its_own_kind() {
        // Synthetic line in the driver's SXid format (NVSwitch).
        let n = classify(
            "NVRM: SXid (PCI:0000:83:00): 12028, Non-fatal, Link 32",
            None,
        )
        .unwrap();
        assert_eq!(
            (n.kind, n.code, n.gpu.as_str()),
            ("sxid", Some(12028), "PCI:0000:83:00")
        );
        assert_eq!(classify("usb 1-1: new high-speed USB device", None), None);
    }

    #[test]
    fn records_out_of_order_do_not_panic() {
        let recs: Vec<Record> = [
            (9, "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus."),
            (2, "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus."),
        ]
        .iter()
        .map(|(seq, m)| Record {
            seq: *seq,
            ts_usec: 1,
            message: m.to_string(),
        })
        .collect();
        let e = events(&recs);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].1.gpu, "0000:01:00.0");
    }
}
