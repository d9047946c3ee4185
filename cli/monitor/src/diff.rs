//! What changed between two snapshots of a machine, in stack terms: each
//! changed fact with its before/after value and what it means. The meaning
//! is never judged here: it is the findings the `Diagnosis` of the newer
//! snapshot has (and the older lacked) on the layers the fact belongs to,
//! or the findings that went away.

use crate::stack::{self, Fact};
use gpukb_doctor::{Diagnosis, Finding, Severity, Verdict};
use gpukb_facts::Fingerprint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One changed fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    /// Stable fact key (`driver.version`, `gpu[0].uuid`, `python[/opt/venv].torch.version`,
    /// `health.verdict`, `finding[<id>]`).
    pub what: String,
    /// What users call it.
    pub label: String,
    /// The older value; `null` when it was absent.
    pub before: Option<String>,
    /// The newer value; `null` when it is absent now.
    pub after: Option<String>,
    /// What it means, from the newer snapshot's diagnosis (empty when it has nothing to say).
    pub meaning: String,
}

/// A fact one side could not observe, so it was not compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotCompared {
    pub what: String,
    /// Why (the observation's error or reason), per side.
    pub why: String,
}

/// The comparison of two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StackDiff {
    pub changes: Vec<Change>,
    pub not_compared: Vec<NotCompared>,
}

impl StackDiff {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// One side: the fingerprint and the doctor's diagnosis of it.
pub struct Side<'a> {
    pub fingerprint: &'a Fingerprint,
    pub diagnosis: &'a Diagnosis,
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Warning => "warning",
        Verdict::Failure => "failure",
        Verdict::Unknown => "unknown",
    }
}

fn counts(f: &Finding) -> bool {
    f.root_cause && f.severity != Severity::Info
}

/// Compares `before` with `after`.
pub fn compare(before: &Side<'_>, after: &Side<'_>) -> StackDiff {
    let a = stack::of(before.fingerprint);
    let b = stack::of(after.fingerprint);
    let old_ids: BTreeSet<&str> = before
        .diagnosis
        .findings
        .iter()
        .filter(|f| counts(f))
        .map(|f| f.id.as_str())
        .collect();
    let new_ids: BTreeSet<&str> = after
        .diagnosis
        .findings
        .iter()
        .filter(|f| counts(f))
        .map(|f| f.id.as_str())
        .collect();
    let appeared: Vec<&Finding> = after
        .diagnosis
        .findings
        .iter()
        .filter(|f| counts(f) && !old_ids.contains(f.id.as_str()))
        .collect();
    let cleared: Vec<&Finding> = before
        .diagnosis
        .findings
        .iter()
        .filter(|f| counts(f) && !new_ids.contains(f.id.as_str()))
        .collect();

    let keys: BTreeSet<&String> = a.facts.keys().chain(b.facts.keys()).collect();
    let mut out = StackDiff {
        changes: Vec::new(),
        not_compared: Vec::new(),
    };
    for key in keys {
        let (fa, fb) = (a.get(key), b.get(key));
        let entry = b
            .facts
            .get(key)
            .or_else(|| a.facts.get(key))
            .expect("key from one side");
        match (&fa, &fb) {
            (Fact::Unknown(w), _) | (_, Fact::Unknown(w)) => {
                if fa != fb {
                    out.not_compared.push(NotCompared {
                        what: key.clone(),
                        why: w.clone(),
                    });
                }
                continue;
            }
            _ if fa == fb => continue,
            _ => {}
        }
        let on_layer = |fs: &[&Finding]| -> Vec<String> {
            let mut v: Vec<String> = Vec::new();
            for f in fs.iter().filter(|f| entry.layers.contains(&f.layer)) {
                if !v.contains(&f.title) {
                    v.push(f.title.clone());
                }
            }
            v
        };
        let mut meaning = on_layer(&appeared);
        if meaning.is_empty() {
            meaning = on_layer(&cleared)
                .into_iter()
                .map(|t| format!("resolved: {t}"))
                .collect();
        }
        out.changes.push(Change {
            what: key.clone(),
            label: entry.label.clone(),
            before: fa.value().map(String::from),
            after: fb.value().map(String::from),
            meaning: meaning.join("; "),
        });
    }
    if before.diagnosis.verdict != after.diagnosis.verdict {
        out.changes.push(Change {
            what: "health.verdict".into(),
            label: "doctor's verdict".into(),
            before: Some(verdict_name(before.diagnosis.verdict).into()),
            after: Some(verdict_name(after.diagnosis.verdict).into()),
            meaning: after.diagnosis.summary.clone(),
        });
    }
    for f in &appeared {
        out.changes.push(Change {
            what: format!("finding[{}]", f.id),
            label: format!("{} ({})", f.check, f.layer.title()),
            before: None,
            after: Some(f.title.clone()),
            meaning: finding_meaning(f),
        });
    }
    for f in &cleared {
        out.changes.push(Change {
            what: format!("finding[{}]", f.id),
            label: format!("{} ({})", f.check, f.layer.title()),
            before: Some(f.title.clone()),
            after: None,
            meaning: "no longer found".into(),
        });
    }
    out
}

/// The first fix and the KB entry of a finding, in one line.
fn finding_meaning(f: &Finding) -> String {
    let mut parts = Vec::new();
    if let Some(fix) = f.fixes.first() {
        parts.push(format!("fix: {}", fix.text));
    }
    if let Some(e) = f.kb_entries.first() {
        parts.push(format!("gpukb kb show {e}"));
    }
    parts.join("; ")
}

/// The verdict's name as the JSON and the DB spell it.
pub fn verdict_str(v: Verdict) -> &'static str {
    verdict_name(v)
}
