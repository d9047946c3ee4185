//! The Xid policy: which kernel-log events fail a node, which only warn, and
//! which are an application's fault, and the hardware verdict they make.
//!
//! The table is data (`cli/monitor/data/xid_policy.csv`, written by
//! `gen_xid_policy.py` from the KB's transcription of NVIDIA's Xid catalogue,
//! <https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>):
//! one row per Xid of the catalogue with the catalogue's Immediate Action
//! ("Resolution Bucket"), gpukb's class, the basis of that class, DCGM's
//! health-watch class where DCGM has one, and the row's source.
//!
//! Classes:
//! * `fail`: the node must drain (reset- or reboot-class: the event keeps
//!   failing until a newer boot or an ack);
//! * `warn`: look at it soon (an unknown Xid, an SXid, a row remap pending);
//! * `application`: the application's fault; alone it leaves the node ok, but
//!   [`REPEATED_APPLICATION`] or more on one GPU in one boot warn;
//! * `by_recovery_action` (Xid 154): the recovery action the driver prints,
//!   `nvmlDeviceGpuRecoveryAction_t` (0 none, 1 GPU reset, 2 node reboot,
//!   3 drain P2P, 4 drain and reset, 5 recover IMEX domain, 6 bus reset,
//!   7 system reboot): 1, 2, 4, 6, 7 fail, 3 and 5 warn, 0 is nothing.

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The policy table, as committed.
pub const TABLE_CSV: &str = include_str!("../data/xid_policy.csv");

/// How many application-class Xids on one GPU in one boot make a warning
/// (gpukb's threshold: one failing kernel logs up to three lines, e.g.
/// Xid 13's warp, global and ESR records).
pub const REPEATED_APPLICATION: u64 = 5;

/// A row's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Fail,
    Warn,
    Application,
    ByRecoveryAction,
}

impl Class {
    fn parse(s: &str) -> Option<Class> {
        Some(match s {
            "fail" => Class::Fail,
            "warn" => Class::Warn,
            "application" => Class::Application,
            "by_recovery_action" => Class::ByRecoveryAction,
            _ => return None,
        })
    }
}

/// One row of the policy table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub xid: u32,
    pub mnemonic: String,
    pub class: Class,
    /// What NVIDIA says clears it (`reset`, `reboot`, `vm_restart`) or empty.
    pub clears: String,
    /// The catalogue's Immediate Action (Resolution Bucket).
    pub immediate_action: String,
    /// DCGM's health-watch class, empty where DCGM does not classify it.
    pub dcgm_class: String,
    /// Why this class.
    pub basis: String,
    pub source: String,
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
pub fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Parses a policy table; a malformed row is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line);
        let bad = |why: &str| format!("xid_policy.csv:{}: {why}", n + 1);
        if f.len() != 8 {
            return Err(bad(&format!("{} fields, expected 8", f.len())));
        }
        rows.push(Row {
            xid: f[0].parse().map_err(|_| bad("xid is not a number"))?,
            mnemonic: f[1].clone(),
            class: Class::parse(&f[2]).ok_or_else(|| bad("unknown class"))?,
            clears: f[3].clone(),
            immediate_action: f[4].clone(),
            dcgm_class: f[5].clone(),
            basis: f[6].clone(),
            source: f[7].clone(),
        });
    }
    Ok(rows)
}

/// The committed table by Xid (a test checks it parses; a row that would not
/// is left out, so an unknown Xid warns rather than the agent stopping).
pub fn table() -> &'static BTreeMap<u32, Row> {
    static T: OnceLock<BTreeMap<u32, Row>> = OnceLock::new();
    T.get_or_init(|| {
        parse(TABLE_CSV)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.xid, r))
            .collect()
    })
}

/// The hardware verdict's levels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Warning,
    Failure,
}

/// A kernel-log event as the policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventView {
    /// The history's event id (`None` without a history, as in `--npd`).
    pub event_id: Option<i64>,
    /// `xid`, `sxid`, `fallen_off_bus`, `gsp_timeout`.
    pub kind: String,
    pub code: Option<u32>,
    pub gpu: String,
    pub message: String,
}

/// What the policy says about one event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Judged {
    /// `fail`, `warn`, `application`, or `none` (Xid 154 to no action).
    pub class: String,
    pub level: Level,
    /// A short reason (the Xid, the catalogue's action).
    pub reason: String,
}

/// The recovery action an Xid 154 line carries ("... changed from 0x0 (None)
/// to 0x2 (Node Reboot Required)").
pub fn recovery_action(message: &str) -> Option<u32> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)recovery action changed from 0x[0-9a-f]+ \([^)]*\) to 0x([0-9a-f]+)")
            .expect("valid pattern")
    });
    re.captures(message)
        .and_then(|c| u32::from_str_radix(&c[1], 16).ok())
}

/// NVML's name of a recovery action.
pub fn recovery_action_name(a: u32) -> &'static str {
    match a {
        0 => "none",
        1 => "GPU reset",
        2 => "node reboot",
        3 => "drain P2P",
        4 => "drain and reset",
        5 => "recover IMEX domain",
        6 => "bus reset",
        7 => "system reboot",
        _ => "unknown action",
    }
}

/// Judges one event by the table.
pub fn judge_event(e: &EventView) -> Judged {
    let code = match (e.kind.as_str(), e.code) {
        ("xid", Some(c)) => c,
        ("fallen_off_bus", _) => 79,
        ("gsp_timeout", _) => 119,
        ("sxid", c) => {
            return Judged {
                class: "warn".into(),
                level: Level::Warning,
                reason: format!(
                    "SXid {} (NVSwitch) on {}",
                    c.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
                    e.gpu
                ),
            }
        }
        (k, _) => {
            return Judged {
                class: "warn".into(),
                level: Level::Warning,
                reason: format!("{k} on {}", e.gpu),
            }
        }
    };
    let Some(row) = table().get(&code) else {
        return Judged {
            class: "warn".into(),
            level: Level::Warning,
            reason: format!("Xid {code} on {}: not in NVIDIA's Xid catalogue", e.gpu),
        };
    };
    let what = match e.kind.as_str() {
        "fallen_off_bus" => "fallen off the bus".to_string(),
        "gsp_timeout" => "GSP timeout".to_string(),
        _ => format!("Xid {code}"),
    };
    let (class, level, action) = match row.class {
        Class::Fail => ("fail", Level::Failure, row.immediate_action.clone()),
        Class::Warn => ("warn", Level::Warning, row.immediate_action.clone()),
        Class::Application => ("application", Level::Ok, row.immediate_action.clone()),
        Class::ByRecoveryAction => match recovery_action(&e.message) {
            Some(0) => ("none", Level::Ok, "recovery action none".into()),
            Some(a @ (1 | 2 | 4 | 6 | 7)) => (
                "fail",
                Level::Failure,
                format!("recovery action {}", recovery_action_name(a)),
            ),
            Some(a) => (
                "warn",
                Level::Warning,
                format!("recovery action {}", recovery_action_name(a)),
            ),
            None => ("warn", Level::Warning, "recovery action unreadable".into()),
        },
    };
    Judged {
        class: class.into(),
        level,
        reason: format!("{what} on {} ({action})", e.gpu),
    }
}

/// The hardware verdict over one boot's events.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct HardwareVerdict {
    pub level: Level,
    /// The events that set the level (failures first), each with its id.
    pub reasons: Vec<HardwareReason>,
}

/// One reason of a hardware verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Reason")]
pub struct HardwareReason {
    pub level: Level,
    pub class: String,
    pub text: String,
    /// The history's event id, to `gpukb agent --ack` it.
    pub event_id: Option<i64>,
}

/// Judges the not-acknowledged events of one boot: the worst event decides;
/// [`REPEATED_APPLICATION`] application-class Xids on one GPU warn.
pub fn judge_boot(events: &[EventView]) -> HardwareVerdict {
    judge_boot_with_history(events, &[])
}

/// [`judge_boot`], knowing the (kind, code, GPU) of events of earlier boots: a
/// reset/reboot-class event that comes again on the same GPU after a reboot
/// escalates to `hardware` (the reboot did not cure it: drain the node, the
/// GPU needs service).
pub fn judge_boot_with_history(
    events: &[EventView],
    earlier: &[(String, Option<u32>, String)],
) -> HardwareVerdict {
    let mut reasons: Vec<HardwareReason> = Vec::new();
    let mut app: BTreeMap<&str, (u64, Option<i64>)> = BTreeMap::new();
    for e in events {
        let mut j = judge_event(e);
        if j.class == "fail"
            && earlier
                .iter()
                .any(|(k, c, g)| *k == e.kind && *c == e.code && *g == e.gpu)
        {
            j.class = "hardware".into();
            j.reason = format!(
                "{}; it came again after a reboot: a hardware fault (drain the node; the GPU needs service)",
                j.reason
            );
        }
        if j.class == "application" {
            let a = app.entry(e.gpu.as_str()).or_default();
            a.0 += 1;
            a.1 = e.event_id;
        }
        if j.level > Level::Ok && !reasons.iter().any(|r| r.text == j.reason) {
            reasons.push(HardwareReason {
                level: j.level,
                class: j.class,
                text: j.reason,
                event_id: e.event_id,
            });
        }
    }
    for (gpu, (n, id)) in app {
        if n >= REPEATED_APPLICATION {
            reasons.push(HardwareReason {
                level: Level::Warning,
                class: "application".into(),
                text: format!("{n} application-class Xids on {gpu} this boot"),
                event_id: id,
            });
        }
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.level));
    HardwareVerdict {
        level: reasons.first().map(|r| r.level).unwrap_or(Level::Ok),
        reasons,
    }
}

/// The node's verdict over the doctor's (stack) and the hardware's: a
/// hardware failure fails the node even where the stack is unknown.
pub fn combine(stack: gpukb_doctor::Verdict, hardware: Level) -> gpukb_doctor::Verdict {
    use gpukb_doctor::Verdict as V;
    match (stack, hardware) {
        (_, Level::Failure) | (V::Failure, _) => V::Failure,
        (V::Unknown, _) => V::Unknown,
        (V::Warning, _) | (_, Level::Warning) => V::Warning,
        (V::Ok, Level::Ok) => V::Ok,
    }
}

/// The verdict a level is on its own.
pub fn level_verdict(l: Level) -> gpukb_doctor::Verdict {
    use gpukb_doctor::Verdict as V;
    match l {
        Level::Ok => V::Ok,
        Level::Warning => V::Warning,
        Level::Failure => V::Failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: u32, message: &str) -> EventView {
        EventView {
            event_id: Some(1),
            kind: "xid".into(),
            code: Some(code),
            gpu: "PCI:0000:44:00".into(),
            message: message.into(),
        }
    }

    #[test]
    fn quoted_fields_split() {
        assert_eq!(split_csv(r#"1,"a, b",c"#), vec!["1", "a, b", "c"]);
        assert_eq!(split_csv(r#""say ""hi""",x"#), vec![r#"say "hi""#, "x"]);
    }

    #[test]
    fn xid_154_goes_by_the_action_it_carries() {
        let reset = ev(
            154,
            "NVRM: Xid (PCI:0018:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
        );
        assert_eq!(judge_event(&reset).level, Level::Failure);
        let p2p = ev(
            154,
            "GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)",
        );
        assert_eq!(judge_event(&p2p).level, Level::Warning);
        let none = ev(
            154,
            "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)",
        );
        assert_eq!(judge_event(&none).level, Level::Ok);
        assert_eq!(judge_event(&ev(154, "garbled")).level, Level::Warning);
    }

    #[test]
    fn unknown_xids_warn_and_name_the_number() {
        let j = judge_event(&ev(9999, ""));
        assert_eq!(j.level, Level::Warning);
        assert!(j.reason.contains("9999"), "{}", j.reason);
    }

    #[test]
    fn repeated_application_xids_on_one_gpu_warn() {
        let few: Vec<EventView> = (0..REPEATED_APPLICATION - 1).map(|_| ev(13, "")).collect();
        assert_eq!(judge_boot(&few).level, Level::Ok);
        let many: Vec<EventView> = (0..REPEATED_APPLICATION).map(|_| ev(13, "")).collect();
        assert_eq!(judge_boot(&many).level, Level::Warning);
        // Spread over GPUs, they stay ok.
        let spread: Vec<EventView> = (0..REPEATED_APPLICATION)
            .map(|i| EventView {
                gpu: format!("PCI:0000:0{i}:00"),
                ..ev(13, "")
            })
            .collect();
        assert_eq!(judge_boot(&spread).level, Level::Ok);
    }

    #[test]
    fn a_fail_class_xid_again_after_a_reboot_escalates_to_hardware() {
        let e = ev(79, "GPU has fallen off the bus.");
        let first = judge_boot(std::slice::from_ref(&e));
        assert_eq!(first.reasons[0].class, "fail");
        let earlier = vec![(e.kind.clone(), e.code, e.gpu.clone())];
        let again = judge_boot_with_history(std::slice::from_ref(&e), &earlier);
        assert_eq!(again.level, Level::Failure);
        assert_eq!(again.reasons[0].class, "hardware");
        assert!(again.reasons[0].text.contains("after a reboot"));
        // Another GPU's history, or an application-class Xid, does not escalate.
        let other = vec![(e.kind.clone(), e.code, "PCI:0000:99:00".to_string())];
        assert_eq!(
            judge_boot_with_history(std::slice::from_ref(&e), &other).reasons[0].class,
            "fail"
        );
        let app = ev(13, "Graphics SM Warp Exception");
        let earlier13 = vec![(app.kind.clone(), app.code, app.gpu.clone())];
        assert_eq!(judge_boot_with_history(&[app], &earlier13).level, Level::Ok);
    }

    #[test]
    fn combine_lets_a_hardware_failure_win() {
        use gpukb_doctor::Verdict as V;
        assert_eq!(combine(V::Ok, Level::Failure), V::Failure);
        assert_eq!(combine(V::Unknown, Level::Failure), V::Failure);
        assert_eq!(combine(V::Unknown, Level::Warning), V::Unknown);
        assert_eq!(combine(V::Ok, Level::Warning), V::Warning);
        assert_eq!(combine(V::Failure, Level::Ok), V::Failure);
        assert_eq!(combine(V::Ok, Level::Ok), V::Ok);
    }
}
