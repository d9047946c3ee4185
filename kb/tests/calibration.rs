//! The printed confidence is the model fitted on fresh pastes (issue 21 item 5): on the
//! fit set it must stay calibrated (expected calibration error over 10 bins, mean
//! confidence next to accuracy), and it must rank confidence the way accuracy goes. The
//! fit set, `tests/eval/calibration/fresh.tsv`, holds each fresh paste's facts as search
//! saw them before any entry was written from it (`tests/eval/calibrate.py features`).

use gpukb_kb::confidence::CONFIDENCE;
use gpukb_kb::eval::Calibration;

const FRESH: &str = include_str!("../../tests/eval/calibration/fresh.tsv");

struct Row {
    right: bool,
    strong: bool,
    score: f64,
    rival: f64,
}

fn rows() -> Vec<Row> {
    FRESH
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 7, "{l}");
            Row {
                right: f[2] == "1",
                strong: f[3] == "1",
                score: f[4].parse().unwrap(),
                rival: f[5].parse().unwrap(),
            }
        })
        .collect()
}

/// Expected calibration error over 10 bins, by the same measure `gpukb kb eval` prints.
fn ece(pairs: &[(f64, bool)]) -> f64 {
    let cases: Vec<(f64, bool, bool)> = pairs.iter().map(|&(c, r)| (c, r, r)).collect();
    Calibration::from_cases(&cases).ece
}

#[test]
fn the_model_is_calibrated_on_the_fresh_pastes_it_was_fitted_on() {
    let rows = rows();
    assert!(rows.len() >= 150, "{} fresh pastes", rows.len());
    let pairs: Vec<(f64, bool)> = rows
        .iter()
        .map(|r| (CONFIDENCE.of(r.strong, r.score, r.rival), r.right))
        .collect();
    let accuracy = rows.iter().filter(|r| r.right).count() as f64 / rows.len() as f64;
    let mean = pairs.iter().map(|p| p.0).sum::<f64>() / pairs.len() as f64;
    assert!(
        (mean - accuracy).abs() < 0.03,
        "mean confidence {mean:.3} vs accuracy {accuracy:.3}"
    );
    let e = ece(&pairs);
    assert!(e < 0.08, "ECE {e:.3} on the fit set");
}

#[test]
fn higher_confidence_is_right_more_often() {
    let rows = rows();
    let mut scored: Vec<(f64, bool)> = rows
        .iter()
        .filter(|r| r.score > 0.0)
        .map(|r| (CONFIDENCE.of(r.strong, r.score, r.rival), r.right))
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = scored.len() / 2;
    let rate = |s: &[(f64, bool)]| s.iter().filter(|p| p.1).count() as f64 / s.len() as f64;
    let (low, high) = (rate(&scored[..half]), rate(&scored[half..]));
    assert!(
        high > low + 0.2,
        "right {high:.2} of the time in the upper half, {low:.2} in the lower"
    );
}
