//! Measures search on a labelled JSONL file (format of shared/eval/dev.jsonl: `error` and
//! `root_cause` = category): top-1 and top-3 category accuracy, per category, and misses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Kb, KbError};

/// One labelled paste.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalCase {
    /// Case id, when present.
    #[serde(default)]
    pub id: Option<String>,
    /// The pasted error.
    pub error: String,
    /// The expected category.
    pub root_cause: String,
}

/// Accuracy counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Cases.
    pub n: usize,
    /// Top-1 category right.
    pub top1: usize,
    /// Category within the top 3 hits.
    pub top3: usize,
}

/// A case whose top hit had the wrong category.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// Case id or line number.
    pub id: String,
    /// Expected category.
    pub expected: String,
    /// Top hits: (entry id, category, score).
    pub got: Vec<(String, String, f64)>,
    /// First characters of the paste.
    pub snippet: String,
}

/// The evaluation report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvalReport {
    /// Overall counts.
    pub overall: Counts,
    /// Counts per expected category.
    pub per_category: BTreeMap<String, Counts>,
    /// Top-1 misses.
    pub misses: Vec<Miss>,
}

/// The longest line of a labelled JSONL file.
pub const MAX_EVAL_LINE: usize = 1 << 20;

/// Parses JSONL text into cases; the error names the bad line.
pub fn parse_jsonl(text: &str) -> Result<Vec<EvalCase>, KbError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_EVAL_LINE {
            return Err(KbError::EvalLine {
                line: i + 1,
                message: format!(
                    "{} bytes is longer than the {MAX_EVAL_LINE} bytes a case may have",
                    line.len()
                ),
            });
        }
        let mut c: EvalCase = serde_json::from_str(line).map_err(|e| KbError::EvalLine {
            line: i + 1,
            message: e.to_string(),
        })?;
        if c.id.is_none() {
            c.id = Some(format!("line {}", i + 1));
        }
        out.push(c);
    }
    Ok(out)
}

impl Kb {
    /// Runs search over `cases` (no machine facts) and scores the categories.
    pub fn eval(&self, cases: &[EvalCase]) -> Result<EvalReport, KbError> {
        let mut r = EvalReport::default();
        for c in cases {
            let hits = self.search(&c.error, None, 5)?;
            let top1 = hits.first().is_some_and(|h| h.category == c.root_cause);
            let top3 = hits.iter().take(3).any(|h| h.category == c.root_cause);
            for k in [
                &mut r.overall,
                r.per_category.entry(c.root_cause.clone()).or_default(),
            ] {
                k.n += 1;
                k.top1 += usize::from(top1);
                k.top3 += usize::from(top3);
            }
            if !top1 {
                r.misses.push(Miss {
                    id: c.id.clone().unwrap_or_default(),
                    expected: c.root_cause.clone(),
                    got: hits
                        .iter()
                        .take(3)
                        .map(|h| (h.id.clone(), h.category.clone(), h.score))
                        .collect(),
                    snippet: c
                        .error
                        .chars()
                        .take(160)
                        .collect::<String>()
                        .replace('\n', " "),
                });
            }
        }
        Ok(r)
    }
}
