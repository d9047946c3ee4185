//! Fits the global ranking weights of `gpukb search` ([`gpukb_kb::WEIGHTS`]) on a labelled
//! corpus by coordinate search, then measures the fitted weights on other files.
//!
//! The objective is the tuning file's strict top-1 count plus half its strict top-3 count.
//! Each pass tries every weight at ×0.6, ×0.8, ×1.25 and ×1.6 (one at a time) and keeps a
//! change only when it raises the objective by at least `--min-gain` (default 2), so a
//! change must move more than one paste. The measure files are scored with the starting
//! and the fitted weights (counts only: their cases are never printed).
//!
//! ```text
//! cargo run --release -p gpukb-kb --example fit_weights -- TUNE.jsonl [MEASURE.jsonl...]
//! ```

#![allow(clippy::disallowed_methods)] // a developer tool reading labelled corpus files

use gpukb_kb::eval::{parse_jsonl, EvalCase};
use gpukb_kb::{Kb, Query, Weights, WEIGHTS};

type Field = (&'static str, fn(&mut Weights) -> &mut f64);

const FIELDS: &[Field] = &[
    ("signature", |w| &mut w.signature),
    ("signature_per_10_chars", |w| &mut w.signature_per_10_chars),
    ("repeat", |w| &mut w.repeat),
    ("code_name", |w| &mut w.code_name),
    ("code_message", |w| &mut w.code_message),
    ("code_number", |w| &mut w.code_number),
    ("unlinked_code", |w| &mut w.unlinked_code),
    ("bm25", |w| &mut w.bm25),
    ("bm25_saturation", |w| &mut w.bm25_saturation),
    ("bm25_code_unlinked", |w| &mut w.bm25_code_unlinked),
    ("bm25_code_linked", |w| &mut w.bm25_code_linked),
    ("other_framework", |w| &mut w.other_framework),
    ("same_framework", |w| &mut w.same_framework),
    ("same_framework_add", |w| &mut w.same_framework_add),
    ("code_only", |w| &mut w.code_only),
    ("diversity", |w| &mut w.diversity),
];

struct Set {
    name: String,
    cases: Vec<(Query, String)>,
}

fn load(kb: &Kb, path: &str) -> Result<Set, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let cases: Vec<EvalCase> = parse_jsonl(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(Set {
        name: path.to_string(),
        cases: cases
            .into_iter()
            .map(|c| (kb.analyze(c.error.as_bytes()), c.root_cause))
            .collect(),
    })
}

/// (strict top-1, strict top-3) of `w` on `set`.
fn score(kb: &Kb, set: &Set, w: &Weights) -> Result<(usize, usize), String> {
    let (mut t1, mut t3) = (0, 0);
    for (q, label) in &set.cases {
        let r = kb.rank_weighted(q, None, 5, w).map_err(|e| e.to_string())?;
        let cats: Vec<&str> = r.results.iter().map(|h| h.category.as_str()).collect();
        t1 += usize::from(cats.first() == Some(&label.as_str()));
        t3 += usize::from(cats.iter().take(3).any(|c| c == label));
    }
    Ok((t1, t3))
}

fn objective((t1, t3): (usize, usize)) -> f64 {
    t1 as f64 + 0.5 * t3 as f64
}

fn main() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut min_gain = 2.0;
    if let Some(i) = args.iter().position(|a| a == "--min-gain") {
        min_gain = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or("--min-gain needs a number")?;
        args.drain(i..i + 2);
    }
    let Some((tune_path, measure)) = args.split_first() else {
        return Err("usage: fit_weights TUNE.jsonl [MEASURE.jsonl...]".into());
    };
    let kb = Kb::open().map_err(|e| e.to_string())?;
    let tune = load(&kb, tune_path)?;
    let mut best = WEIGHTS;
    let start = score(&kb, &tune, &best)?;
    let mut best_obj = objective(start);
    println!(
        "start on {}: top-1 {} top-3 {}",
        tune.name, start.0, start.1
    );
    for pass in 1..=4 {
        let mut changed = false;
        for (name, field) in FIELDS {
            for f in [0.6, 0.8, 1.25, 1.6] {
                let mut w = best;
                *field(&mut w) *= f;
                let s = score(&kb, &tune, &w)?;
                if objective(s) >= best_obj + min_gain {
                    println!(
                        "pass {pass}: {name} {:.3} -> {:.3}: top-1 {} top-3 {}",
                        *field(&mut best),
                        *field(&mut w),
                        s.0,
                        s.1
                    );
                    best = w;
                    best_obj = objective(s);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    println!("fitted: {best:?}");
    for path in measure {
        let set = load(&kb, path)?;
        let (a, b) = (score(&kb, &set, &WEIGHTS)?, score(&kb, &set, &best)?);
        println!(
            "{} ({} cases): top-1 {} -> {}, top-3 {} -> {}",
            set.name,
            set.cases.len(),
            a.0,
            b.0,
            a.1,
            b.1
        );
    }
    Ok(())
}
