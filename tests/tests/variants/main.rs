//! Generated variants of every platform-dependent check (see [`gen`]): the
//! doctor must name each broken machine's root cause first and leave each
//! healthy control without a finding above info. A fixed 30 % of the
//! variants (by the hash of their name) is held out: the doctor's checks are
//! tuned on the other part only, and the test reports both scores.
//!
//! `GPUKB_VARIANT_SEED=N` replays another seed (the seed is printed);
//! `GPUKB_VARIANT_SHOW=tuning` prints every tuning variant's outcome (the
//! held-out part's are never printed, only its score and how many missed).
#![allow(clippy::disallowed_methods)] // tests read fixtures and the environment

mod gen;
mod machine;

use gen::{held_out, Input, Variant};
use gpukb_kb::diagnose::{diagnose, Severity};

/// The default seed (any other replays through `GPUKB_VARIANT_SEED`).
const SEED: u64 = 0x5eed_2026_1202;

/// The scores this test may not fall below (a ratchet: raise them as checks
/// improve; issue 20's target is 90 % on both parts). Measured with the
/// doctor's checks of main at 701daa7, before the platform checks (WSL2 with
/// a Linux driver, a GPU fallen off the bus, MIG with uncounted instances,
/// NGC's LD_LIBRARY_PATH) exist: tuning 31/43, held out 13/17.
const FLOOR_TUNING: f64 = 31.0 / 43.0;
const FLOOR_HELD_OUT: f64 = 13.0 / 17.0;

/// What the doctor made of one variant.
struct Scored {
    name: String,
    right: bool,
    said: String,
}

fn judge(v: &Variant) -> Scored {
    let fp = match &v.input {
        Input::Capture(m) => m.observe(),
        Input::Observed(fp) => (**fp).clone(),
    };
    let d = diagnose(&fp, "generated variant", None);
    let first = d.findings.first();
    let said = match first {
        Some(f) => format!("{} [{:?}] {}", f.check, f.severity, f.title),
        None => "no finding".into(),
    };
    let right = match v.expect {
        Some(check) => first.is_some_and(|f| f.check.name() == check && f.root_cause),
        None => d.findings.iter().all(|f| f.severity == Severity::Info),
    };
    Scored {
        name: v.name.clone(),
        right,
        said,
    }
}

fn score(s: &[&Scored]) -> f64 {
    if s.is_empty() {
        return 1.0;
    }
    s.iter().filter(|x| x.right).count() as f64 / s.len() as f64
}

#[test]
fn generated_variants_root_cause_first_and_healthy_controls_clean() {
    let seed = std::env::var("GPUKB_VARIANT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let variants = gen::generate(seed);
    let platforms: std::collections::BTreeSet<_> = variants.iter().map(|v| v.platform).collect();
    assert_eq!(
        platforms.len(),
        5,
        "every platform has variants: {platforms:?}"
    );
    let names: std::collections::BTreeSet<_> = variants.iter().map(|v| v.name.clone()).collect();
    assert_eq!(names.len(), variants.len(), "variant names are unique");
    let scored: Vec<(bool, Scored)> = variants
        .iter()
        .map(|v| (held_out(&v.name), judge(v)))
        .collect();
    let tuning: Vec<&Scored> = scored.iter().filter(|(h, _)| !h).map(|(_, s)| s).collect();
    let held: Vec<&Scored> = scored.iter().filter(|(h, _)| *h).map(|(_, s)| s).collect();
    let show = std::env::var("GPUKB_VARIANT_SHOW").is_ok_and(|v| v == "tuning");
    for s in &tuning {
        if show || !s.right {
            println!(
                "{} {}: {}",
                if s.right { "ok  " } else { "MISS" },
                s.name,
                s.said
            );
        }
    }
    let (t, h) = (score(&tuning), score(&held));
    println!(
        "seed {seed:#x}: tuning part {}/{} = {:.0} %, held-out part {}/{} = {:.0} % ({} missed)",
        tuning.iter().filter(|s| s.right).count(),
        tuning.len(),
        t * 100.0,
        held.iter().filter(|s| s.right).count(),
        held.len(),
        h * 100.0,
        held.iter().filter(|s| !s.right).count(),
    );
    assert!(
        held.len() * 10 >= variants.len() * 2,
        "the held-out part is about 30 %"
    );
    assert!(
        t >= FLOOR_TUNING - 1e-9,
        "tuning part {:.0} % fell below {:.0} %",
        t * 100.0,
        FLOOR_TUNING * 100.0
    );
    assert!(
        h >= FLOOR_HELD_OUT - 1e-9,
        "held-out part {:.0} % fell below {:.0} %",
        h * 100.0,
        FLOOR_HELD_OUT * 100.0
    );
}
