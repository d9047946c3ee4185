//! The confidence `gpukb search` prints for an answer on the text alone: how often an
//! answer with the same facts of its ranking was right on real pastes that no KB entry was
//! written from. A logistic model of three facts:
//! - **strong**: the answer matched a signature or an error code, not words alone;
//! - **score**: its search score (as `ln(1 + score)`);
//! - **rival**: the best score of another cause over the first answer's score (0 when no
//!   other cause scored).
//!
//! The answers after the first share what the first leaves ([`ranked`]).
//!
//! The coefficients are fitted by `tests/eval/calibrate.py` on the corpus's held-out split
//! (`tests/eval/calibration/heldout.tsv`: each held-out paste's facts as search sees them), as
//! issue 21 asks: the printed confidence is calibrated on pastes no entry was written from.
//! Only these four numbers are fitted there; no entry is. The ECE reported for them is
//! 5-fold cross-validated (each paste's confidence from a fit that did not see it). The
//! machine's say (a confirmed cause's floor, a ruled-out one set aside) is applied
//! afterwards, in search.

/// The coefficients of the logistic model (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ConfidenceModel {
    /// Constant term.
    pub intercept: f64,
    /// Added when the answer matched a signature or an error code.
    pub strong: f64,
    /// Times `ln(1 + score)`.
    pub log_score: f64,
    /// Times the rival ratio (0..1).
    pub rival: f64,
}

/// The model search prints with. Fitted by `tests/eval/calibrate.py fit` on the 697 pastes of
/// the corpus's held-out split (files a-z, ab-az, ba-bu, bw-cf, ch-co;
/// `tests/eval/calibration/heldout.tsv`, 2026-12-06, fourteenth round): search is right first on
/// 57.2 % of them as their labels were frozen; 5-fold cross-validated ECE 0.035, in-sample 0.040
/// (10 bins). The fit keeps `strong` at 0 or above (a signature never lowers confidence at the
/// same score and rival). The previous fit (655 pastes, tenth round) gave 0.052 on these 697:
/// the fourteenth round's two new categories left 8 frozen held-out labels naming the old ones
/// (0.045 with those 8 corrected). On the shared sets this model's ECE is 0.126 (dev2, 50
/// pastes; the previous fit 0.077) and 0.231 (dev, 48, under-confident; 0.205): the fit set is
/// the 697, not the 98.
///
/// Until 2026-12-05 the fit set was the fresh score of each new file's tuning part
/// (`tests/eval/calibration/fresh.tsv`, scored before any entry was written from them). That
/// model was under-confident on the held-out split (0.558 printed against 0.603 right, ECE
/// 0.058): the held-out pastes come from the sources the KB was tuned on, first-contact pastes
/// from new ones. This model, on the 1417 first-contact pastes, is over-confident instead
/// (0.535 against 0.513 right, ECE 0.052 by the model, 0.058 as printed): on a mechanism
/// the KB has never seen, read its confidence as an upper bound.
pub const CONFIDENCE: ConfidenceModel = ConfidenceModel {
    intercept: 0.2092,
    strong: 0.9174,
    log_score: 0.2711,
    rival: -2.5006,
};

impl ConfidenceModel {
    /// The probability that an answer with these facts is the right cause, in 0..0.99.
    pub fn of(&self, strong: bool, score: f64, rival_ratio: f64) -> f64 {
        if score <= 0.0 {
            return 0.0;
        }
        let z = self.intercept
            + if strong { self.strong } else { 0.0 }
            + self.log_score * score.ln_1p()
            + self.rival * rival_ratio.clamp(0.0, 1.0);
        (1.0 / (1.0 + (-z).exp())).clamp(0.0, 0.99)
    }
}

/// The share of the first answer's misses that the next answers hold, estimated on fresh
/// pastes (the c/d/e tuning part on arrival: top-1 57.5 %, top-3 73.7 %, so ranks 2-3 held
/// the cause for 16 % of the pastes, 38 % of the first answer's misses; 0.45 allows for
/// ranks 4-5, which that measurement did not count).
pub const ALTERNATIVES_SHARE: f64 = 0.45;

/// The confidence of each ranked answer (best first), from (cause, score, strong): the
/// first by the model; each of the next four its share, by score, of what the first leaves
/// ([`ALTERNATIVES_SHARE`] of `1 - first`), so the first five add up to at most 1.
pub fn ranked(model: &ConfidenceModel, answers: &[(&str, f64, bool)]) -> Vec<f64> {
    let Some(&(cause, top, strong)) = answers.first() else {
        return Vec::new();
    };
    let rival = answers
        .iter()
        .filter(|(c, _, _)| *c != cause)
        .map(|&(_, s, _)| s)
        .fold(0.0_f64, f64::max);
    let first = model.of(strong, top, if top > 0.0 { rival / top } else { 0.0 });
    // shared among the next four answers (ranks 2-5, as measured); a later one gets its
    // score's part of the same amount, never more than the fifth
    let rest: f64 = answers[1..]
        .iter()
        .take(4)
        .map(|&(_, s, _)| s.max(0.0))
        .sum();
    std::iter::once(first)
        .chain(answers[1..].iter().map(|&(_, s, _)| {
            if rest > 0.0 {
                (1.0 - first) * ALTERNATIVES_SHARE * s.max(0.0) / rest
            } else {
                0.0
            }
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_rival_lowers_confidence_and_a_signature_never_lowers_it() {
        let m = CONFIDENCE;
        let alone = m.of(true, 20.0, 0.0);
        let close = m.of(true, 20.0, 0.95);
        assert!(close < alone, "{close} {alone}");
        assert!(m.of(false, 20.0, 0.0) <= alone);
        assert!(m.strong >= 0.0);
        assert_eq!(m.of(true, 0.0, 0.0), 0.0);
        assert!(alone <= 0.99);
    }

    #[test]
    fn the_first_answer_gets_the_model_and_the_rest_share_what_it_leaves() {
        let m = CONFIDENCE;
        let c = ranked(
            &m,
            &[("a", 10.0, true), ("a", 8.0, true), ("b", 5.0, false)],
        );
        // the rival of the first is the best *other* cause: b at 5 of 10
        assert!((c[0] - m.of(true, 10.0, 0.5)).abs() < 1e-12);
        let left = (1.0 - c[0]) * ALTERNATIVES_SHARE;
        assert!((c[1] - left * 8.0 / 13.0).abs() < 1e-12);
        assert!((c[2] - left * 5.0 / 13.0).abs() < 1e-12);
        assert!(c.iter().sum::<f64>() <= 1.0);
        assert_eq!(ranked(&m, &[("a", 4.0, true)]).len(), 1);
        assert!(ranked(&m, &[]).is_empty());
    }
}
