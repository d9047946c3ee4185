//! The kernel log's records and what the NVIDIA driver reports in them: NVRM
//! Xid and SXid events, "fallen off the bus", GSP RPC timeouts. Pure parsers
//! on the text of `/dev/kmsg` records (format `PRI,SEQ,TS_USEC,FLAGS;MESSAGE`,
//! Documentation/ABI/testing/dev-kmsg); the doctor's reader
//! ([`crate::collect`]) and the monitor's both use them.

use crate::fingerprint::{KernelEvent, KernelEventKind};
use regex::Regex;
use std::sync::OnceLock;

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
    pub kind: KernelEventKind,
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

/// Whether a record may be a driver report ([`classify`] decides): the
/// cheap filter a reader applies before keeping a record.
pub fn may_be_nvidia(message: &str) -> bool {
    message.contains("NVRM") || message.contains("fallen off the bus")
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
    if !may_be_nvidia(message) {
        return None;
    }
    let xid = re(&XID, r"NVRM: (S?Xid) \((PCI:[0-9A-Fa-f:.]+)\): (\d+)");
    if let Some(c) = xid.captures(message) {
        return Some(Nvrm {
            kind: if &c[1] == "SXid" {
                KernelEventKind::Sxid
            } else {
                KernelEventKind::Xid
            },
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
            kind: KernelEventKind::FallenOffBus,
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
            kind: KernelEventKind::GspTimeout,
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
            let dup = n.kind == KernelEventKind::FallenOffBus
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

/// The events of [`events`] as fingerprint facts (messages cut at 500 characters).
pub fn kernel_events(records: &[Record]) -> Vec<KernelEvent> {
    events(records)
        .into_iter()
        .map(|(r, n)| KernelEvent {
            kind: n.kind,
            code: n.code,
            gpu: n.gpu,
            seq: r.seq,
            ts_usec: r.ts_usec,
            message: r.message.chars().take(500).collect(),
        })
        .collect()
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
            (KernelEventKind::Sxid, Some(12028), "PCI:0000:83:00")
        );
        assert_eq!(n.kind.as_str(), "sxid");
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

    #[test]
    fn xid_79_is_a_gpu_fallen_off_the_bus() {
        // The driver's Xid 79 record as NVIDIA's Xid catalog documents it
        // ("GPU has fallen off the bus"), in /dev/kmsg form.
        let recs: Vec<Record> = [
            "3,1801,5821331442,-;NVRM: GPU at PCI:0000:3b:00: GPU-6c4f2f1a-2b6d-11ee-a1b2-0242ac120002",
            "3,1802,5821331460,-;NVRM: GPU Board Serial Number: 1652222012345",
            "3,1803,5821331471,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=2143, name=python3, GPU has fallen off the bus.",
            "3,1804,5821331480,-;NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
        ]
        .iter()
        .filter_map(|l| parse_record(l))
        .collect();
        let ev = kernel_events(&recs);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert_eq!(
            (ev[0].kind, ev[0].code, ev[0].gpu.as_str()),
            (KernelEventKind::Xid, Some(79), "PCI:0000:3b:00")
        );
        assert_eq!(ev[1].kind, KernelEventKind::FallenOffBus);
        assert_eq!(ev[1].gpu, "0000:3b:00.0");
    }
}
