//! The kernel log of the current boot, for what the NVIDIA driver reported
//! there (Xid 79 "GPU has fallen off the bus", other Xids, SXids): read from
//! `/dev/kmsg` through the seam, else from the journal (`journalctl -k -b`,
//! through the runner's timeout). Where permissions hide both
//! (`kernel.dmesg_restrict = 1` without `CAP_SYSLOG`, a container) the log is
//! unobservable, with why.

use super::Context;
use crate::fingerprint::{KernelLog, Observed, Source};
use crate::host::{Host, HostError};
use crate::parse::kernel_log::{kernel_events, may_be_nvidia, parse_record, Record};
use std::time::Duration;

/// How long reading the ring buffer may take.
const DEADLINE: Duration = Duration::from_secs(2);

pub(super) fn collect(ctx: &Context) -> Observed<KernelLog> {
    let host = &ctx.host;
    let kmsg = Source::file("/dev/kmsg");
    let boot_id = boot_id(host);
    let kmsg_error = match host.kernel_log(may_be_nvidia, DEADLINE) {
        Ok(Some(k)) => {
            let recs: Vec<Record> = k.kept.iter().filter_map(|l| parse_record(l)).collect();
            return Observed::found(
                KernelLog {
                    boot_id,
                    records: k.read,
                    events: kernel_events(&recs),
                },
                kmsg,
            );
        }
        Ok(None) => "there is no /dev/kmsg".to_string(),
        Err(e @ HostError::Io { .. }) => format!("{e}{}", restriction(host)),
        Err(e) => return super::observed_error(kmsg, e),
    };
    let journal = Source::Command {
        command: "journalctl -k -b".into(),
    };
    match read_journal(host) {
        Ok(recs) => Observed::found(
            KernelLog {
                boot_id,
                records: recs.len() as u64,
                events: kernel_events(&recs),
            },
            journal,
        ),
        Err(j) => Observed::unobservable(
            kmsg,
            format!("the kernel log cannot be read here: {kmsg_error}; {j}"),
        ),
    }
}

/// Why reading the kernel log was refused, when `kernel.dmesg_restrict` says.
fn restriction(host: &Host) -> String {
    match host.read_string("/proc/sys/kernel/dmesg_restrict") {
        Ok(Some(t)) if t.trim() == "1" => {
            " (kernel.dmesg_restrict = 1: only a process with CAP_SYSLOG, e.g. root, may read it)"
                .into()
        }
        _ => String::new(),
    }
}

/// The kernel log of this boot from journald (`journalctl -k -b -o json`),
/// through the host's command runner (it has a timeout). Records are keyed by
/// their kernel timestamp in µs.
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
    Ok(parse_journal_json(&out.stdout))
}

/// The records of `journalctl -o json` output (one JSON object a line).
pub fn parse_journal_json(text: &str) -> Vec<Record> {
    let mut v = Vec::new();
    for line in text.lines() {
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
    v
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id(host: &Host) -> Option<String> {
    host.read_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}
