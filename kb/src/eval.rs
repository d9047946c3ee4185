//! Measures search on a labelled JSONL file (format of shared/eval/dev.jsonl: `error`,
//! `root_cause` = category, optional `machine` = a capture directory): top-1 and top-3
//! category accuracy, strict and counting the `same_as` equivalences of
//! `kb/categories.tsv`, per category, the misses, and (for cases with a machine) the
//! with-machine top-1 beside the text-only one.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::{Kb, KbError, MachineFacts};

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
    /// A capture directory (written by `gpukb capture`) of the machine the paste came from;
    /// relative paths are relative to the JSONL file.
    #[serde(default)]
    pub machine: Option<String>,
}

/// Which categories name the same cause: our categories and the eval categories their
/// `same_as` column lists. The relation is symmetric and not transitive.
#[derive(Debug, Clone, Default)]
pub struct CategoryMap {
    ours: BTreeSet<String>,
    same: BTreeMap<String, BTreeSet<String>>,
}

impl CategoryMap {
    /// Builds the map from (category, same_as names) rows.
    pub fn new<I, S>(rows: I) -> CategoryMap
    where
        I: IntoIterator<Item = (String, S)>,
        S: IntoIterator<Item = String>,
    {
        let mut m = CategoryMap::default();
        for (cat, same) in rows {
            for s in same {
                if s == cat {
                    continue;
                }
                m.same.entry(cat.clone()).or_default().insert(s.clone());
                m.same.entry(s).or_default().insert(cat.clone());
            }
            m.ours.insert(cat);
        }
        m
    }

    /// Whether `label` is one of our categories or named by a `same_as`.
    pub fn knows(&self, label: &str) -> bool {
        self.ours.contains(label) || self.same.contains_key(label)
    }

    /// Whether a hit of category `got` answers a case labelled `expected`: the same
    /// category, or one the `same_as` column declares the same cause.
    pub fn same_cause(&self, expected: &str, got: &str) -> bool {
        expected == got || self.same.get(expected).is_some_and(|s| s.contains(got))
    }
}

/// Accuracy counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Cases.
    pub n: usize,
    /// Top-1 category is the label.
    pub top1: usize,
    /// The label is among the top-3 hits' categories.
    pub top3: usize,
    /// Top-1 category is the label or declared the same cause (`same_as`).
    pub top1_same_as: usize,
    /// Top-3 counting `same_as`.
    pub top3_same_as: usize,
}

impl Counts {
    fn add(&mut self, o: &Outcome) {
        self.n += 1;
        self.top1 += usize::from(o.top1);
        self.top3 += usize::from(o.top3);
        self.top1_same_as += usize::from(o.top1_same_as);
        self.top3_same_as += usize::from(o.top3_same_as);
    }
}

/// Top-1 with and without the case's machine, over the cases that name one.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MachineCounts {
    /// Cases with a machine.
    pub n: usize,
    /// Text alone: top-1 category is the label.
    pub text_top1: usize,
    /// With the machine's facts: top-1 category is the label.
    pub machine_top1: usize,
    /// Text alone, counting `same_as`.
    pub text_top1_same_as: usize,
    /// With the machine, counting `same_as`.
    pub machine_top1_same_as: usize,
}

/// One ranked answer.
#[derive(Debug, Clone, Serialize)]
pub struct Got {
    /// Entry id.
    pub id: String,
    /// Its category.
    pub category: String,
    /// Search score.
    pub score: f64,
    /// The confidence search printed.
    pub confidence: f64,
}

/// How well the top-1 confidence matches how often the top-1 answer is right: expected
/// calibration error over 10 equal-width confidence bins (a case with no answer counts as
/// confidence 0, wrong).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Calibration {
    /// Expected calibration error against the strict label.
    pub ece: f64,
    /// Expected calibration error counting `same_as`.
    pub ece_same_as: f64,
    /// Mean top-1 confidence.
    pub mean_confidence: f64,
    /// Per bin (0 = [0, 0.1) ... 9 = [0.9, 1]): cases, mean confidence, strict accuracy.
    pub bins: Vec<CalibrationBin>,
}

/// One confidence bin of [`Calibration`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct CalibrationBin {
    /// Lower edge of the bin.
    pub from: f64,
    /// Cases whose top-1 confidence falls in it.
    pub n: usize,
    /// Their mean confidence.
    pub confidence: f64,
    /// Their strict top-1 accuracy.
    pub accuracy: f64,
    /// Their top-1 accuracy counting `same_as`.
    pub accuracy_same_as: f64,
}

impl Calibration {
    /// From (top-1 confidence, strict right, same_as right) per case.
    pub fn from_cases(cases: &[(f64, bool, bool)]) -> Calibration {
        const BINS: usize = 10;
        let n = cases.len().max(1) as f64;
        let mut acc = vec![(0usize, 0.0f64, 0usize, 0usize); BINS];
        for &(c, right, right_sa) in cases {
            let b = ((c.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1);
            acc[b].0 += 1;
            acc[b].1 += c;
            acc[b].2 += usize::from(right);
            acc[b].3 += usize::from(right_sa);
        }
        let mut out = Calibration {
            mean_confidence: cases.iter().map(|c| c.0).sum::<f64>() / n,
            ..Default::default()
        };
        for (i, (k, conf, right, right_sa)) in acc.into_iter().enumerate() {
            if k == 0 {
                continue;
            }
            let kf = k as f64;
            let bin = CalibrationBin {
                from: i as f64 / BINS as f64,
                n: k,
                confidence: conf / kf,
                accuracy: right as f64 / kf,
                accuracy_same_as: right_sa as f64 / kf,
            };
            out.ece += kf / n * (bin.confidence - bin.accuracy).abs();
            out.ece_same_as += kf / n * (bin.confidence - bin.accuracy_same_as).abs();
            out.bins.push(bin);
        }
        out
    }
}

/// A case whose top hit did not have the label's category.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// Case id or line number.
    pub id: String,
    /// Expected category.
    pub expected: String,
    /// Whether the top hit counts under `same_as` (a strict miss only).
    pub top1_same_as: bool,
    /// Whether the label's cause is in the top 3 (strict, then `same_as`).
    pub top3: bool,
    /// Top 3 counting `same_as`.
    pub top3_same_as: bool,
    /// Top hits.
    pub got: Vec<Got>,
    /// First characters of the paste.
    pub snippet: String,
}

/// A case with a machine: its top-1 from the text alone and with the machine's facts.
#[derive(Debug, Clone, Serialize)]
pub struct MachineCase {
    /// Case id or line number.
    pub id: String,
    /// Expected category.
    pub expected: String,
    /// The capture directory, as the case names it.
    pub machine: String,
    /// Top-1 from the text alone.
    pub text_top1: Option<Got>,
    /// Top-1 with the machine's facts.
    pub machine_top1: Option<Got>,
    /// Text-alone top-1 answers the label (`same_as` counted).
    pub text_right: bool,
    /// With-machine top-1 answers the label (`same_as` counted).
    pub machine_right: bool,
}

/// The evaluation report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvalReport {
    /// Overall counts.
    pub overall: Counts,
    /// Counts per expected category.
    pub per_category: BTreeMap<String, Counts>,
    /// Strict top-1 misses, by expected category.
    pub misses: Vec<Miss>,
    /// Cases with a machine.
    pub machine: MachineCounts,
    /// Each case with a machine.
    pub machine_cases: Vec<MachineCase>,
    /// Calibration of the text-only top-1 confidence.
    pub calibration: Calibration,
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

/// How one ranking scores against a label.
struct Outcome {
    top1: bool,
    top3: bool,
    top1_same_as: bool,
    top3_same_as: bool,
}

fn judge(map: &CategoryMap, expected: &str, got: &[Got]) -> Outcome {
    let top3 = &got[..got.len().min(3)];
    Outcome {
        top1: got.first().is_some_and(|g| g.category == expected),
        top3: top3.iter().any(|g| g.category == expected),
        top1_same_as: got
            .first()
            .is_some_and(|g| map.same_cause(expected, &g.category)),
        top3_same_as: top3.iter().any(|g| map.same_cause(expected, &g.category)),
    }
}

fn snippet(text: &str) -> String {
    text.chars()
        .take(160)
        .collect::<String>()
        .replace('\n', " ")
}

impl Kb {
    /// Our categories and their `same_as` equivalences.
    pub fn category_map(&self) -> Result<CategoryMap, KbError> {
        let mut st = self
            .db
            .prepare("SELECT category, same_as FROM categories ORDER BY category")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for r in rows {
            let (cat, same) = r?;
            let same: Vec<String> = same
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            out.push((cat, same));
        }
        Ok(CategoryMap::new(out))
    }

    /// Fails on the first case whose label is neither our category nor a `same_as` name.
    pub fn check_labels(&self, cases: &[EvalCase]) -> Result<(), KbError> {
        let map = self.category_map()?;
        match cases.iter().find(|c| !map.knows(&c.root_cause)) {
            Some(c) => Err(KbError::EvalLabel {
                id: c.id.clone().unwrap_or_default(),
                label: c.root_cause.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Runs search over `cases` on their text alone and scores the categories.
    pub fn eval(&self, cases: &[EvalCase]) -> Result<EvalReport, KbError> {
        self.eval_with_machines(cases, &[])
    }

    /// Runs search over `cases`; `machines[i]`, when present, is the facts of case i's
    /// machine, and that case is also ranked with them.
    pub fn eval_with_machines(
        &self,
        cases: &[EvalCase],
        machines: &[Option<MachineFacts>],
    ) -> Result<EvalReport, KbError> {
        self.check_labels(cases)?;
        let map = self.category_map()?;
        let ranked = |text: &str, facts: Option<&MachineFacts>| -> Result<Vec<Got>, KbError> {
            Ok(self
                .search(text, facts, 5)?
                .into_iter()
                .map(|h| Got {
                    id: h.id,
                    category: h.category,
                    score: h.score,
                    confidence: h.confidence,
                })
                .collect())
        };
        let mut r = EvalReport::default();
        let mut confidences = Vec::with_capacity(cases.len());
        for (i, c) in cases.iter().enumerate() {
            let id = c.id.clone().unwrap_or_default();
            let got = ranked(&c.error, None)?;
            let o = judge(&map, &c.root_cause, &got);
            confidences.push((
                got.first().map_or(0.0, |g| g.confidence),
                o.top1,
                o.top1_same_as,
            ));
            r.overall.add(&o);
            r.per_category
                .entry(c.root_cause.clone())
                .or_default()
                .add(&o);
            if let Some(d) = machines.get(i).and_then(Option::as_ref) {
                let with = ranked(&c.error, Some(d))?;
                let w = judge(&map, &c.root_cause, &with);
                let m = &mut r.machine;
                m.n += 1;
                m.text_top1 += usize::from(o.top1);
                m.machine_top1 += usize::from(w.top1);
                m.text_top1_same_as += usize::from(o.top1_same_as);
                m.machine_top1_same_as += usize::from(w.top1_same_as);
                r.machine_cases.push(MachineCase {
                    id: id.clone(),
                    expected: c.root_cause.clone(),
                    machine: c.machine.clone().unwrap_or_default(),
                    text_top1: got.first().cloned(),
                    machine_top1: with.into_iter().next(),
                    text_right: o.top1_same_as,
                    machine_right: w.top1_same_as,
                });
            }
            if !o.top1 {
                r.misses.push(Miss {
                    id,
                    expected: c.root_cause.clone(),
                    top1_same_as: o.top1_same_as,
                    top3: o.top3,
                    top3_same_as: o.top3_same_as,
                    got: got.into_iter().take(3).collect(),
                    snippet: snippet(&c.error),
                });
            }
        }
        r.misses.sort_by(|a, b| a.expected.cmp(&b.expected));
        r.calibration = Calibration::from_cases(&confidences);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> CategoryMap {
        CategoryMap::new([
            (
                "container_cdi_spec_missing".to_string(),
                vec!["cdi_spec_stale".to_string(), "cdi_spec_unresolvable".into()],
            ),
            ("oom".to_string(), vec![]),
        ])
    }

    #[test]
    fn calibration_error_over_ten_bins() {
        // calibrated: 0.85 right 17 of 20 times, 0.25 right 5 of 20 times
        let mut cases = vec![(0.85, true, true); 17];
        cases.extend(vec![(0.85, false, true); 3]);
        cases.extend(vec![(0.25, false, false); 15]);
        cases.extend(vec![(0.25, true, true); 5]);
        let c = Calibration::from_cases(&cases);
        assert_eq!(c.bins.len(), 2);
        assert!(c.ece < 1e-9, "{c:?}");
        // same_as: the top bin is right 20/20 -> |0.85 - 1| * 0.5
        assert!((c.ece_same_as - 0.075).abs() < 1e-9, "{c:?}");
        // always 0.9 and never right: error 0.9
        let c = Calibration::from_cases(&[(0.9, false, false), (0.95, false, false)]);
        assert!((c.ece - 0.925).abs() < 1e-9);
        // no answer counts as confidence 0, wrong
        let c = Calibration::from_cases(&[(0.0, false, false)]);
        assert_eq!(c.ece, 0.0);
    }

    #[test]
    fn same_as_is_symmetric_and_not_transitive() {
        let m = map();
        assert!(m.same_cause("cdi_spec_stale", "container_cdi_spec_missing"));
        assert!(m.same_cause("container_cdi_spec_missing", "cdi_spec_stale"));
        assert!(!m.same_cause("cdi_spec_stale", "cdi_spec_unresolvable"));
        assert!(!m.same_cause("oom", "container_cdi_spec_missing"));
        assert!(m.same_cause("oom", "oom"));
    }

    #[test]
    fn known_labels_are_ours_or_same_as_names() {
        let m = map();
        assert!(m.knows("oom"));
        assert!(m.knows("cdi_spec_unresolvable"));
        assert!(!m.knows("made_up_label"));
    }

    #[test]
    fn judge_counts_strict_and_same_as_apart() {
        let m = map();
        let got = vec![
            Got {
                id: "a".into(),
                category: "oom".into(),
                score: 3.0,
                confidence: 0.8,
            },
            Got {
                id: "b".into(),
                category: "container_cdi_spec_missing".into(),
                score: 2.0,
                confidence: 0.5,
            },
        ];
        let o = judge(&m, "cdi_spec_stale", &got);
        assert!(!o.top1 && !o.top3 && !o.top1_same_as && o.top3_same_as);
        let o = judge(&m, "container_cdi_spec_missing", &got[1..]);
        assert!(o.top1 && o.top1_same_as);
    }
}
