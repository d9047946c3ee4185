//! The literal prefilter of a regex signature: literals of which every match must contain
//! one, so search runs the regex only on texts that contain one of them.

/// Literals of which every match of the regex must contain at least one (lowercased), if
/// such a set of reasonably specific literals exists; joined with `\x1f` in the database.
pub(crate) fn regex_prefilter(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Hir, HirKind};
    fn quality(set: &[String]) -> usize {
        set.iter().map(|s| s.trim().len()).min().unwrap_or(0)
    }
    fn better(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if quality(&b) > quality(&a) { b } else { a }),
            (a, b) => a.or(b),
        }
    }
    fn lit(h: &Hir) -> Option<String> {
        match h.kind() {
            HirKind::Literal(l) => Some(String::from_utf8_lossy(&l.0).to_lowercase()),
            _ => None,
        }
    }
    // A set of literals, one of which appears in every match of `h`.
    fn req(h: &Hir) -> Option<Vec<String>> {
        match h.kind() {
            HirKind::Literal(_) => lit(h).map(|l| vec![l]),
            HirKind::Capture(c) => req(&c.sub),
            HirKind::Repetition(r) if r.min >= 1 => req(&r.sub),
            HirKind::Alternation(alts) => {
                let mut all = Vec::new();
                for a in alts {
                    all.extend(req(a)?);
                }
                (all.len() <= 16).then_some(all)
            }
            HirKind::Concat(children) => {
                let mut best: Option<Vec<String>> = None;
                let mut run = String::new();
                for c in children {
                    if let Some(l) = lit(c) {
                        run.push_str(&l);
                        continue;
                    }
                    if !run.is_empty() {
                        best = better(best, Some(vec![std::mem::take(&mut run)]));
                    }
                    best = better(best, req(c));
                }
                if !run.is_empty() {
                    best = better(best, Some(vec![run]));
                }
                best
            }
            _ => None,
        }
    }
    // Search matches prefilter literals against the lower-cased text, so a leading
    // case-insensitive flag is dropped here: under it every letter is a class, not a literal.
    let p = without_leading_case_flag(pattern);
    let hir = regex_syntax::ParserBuilder::new().build().parse(&p).ok()?;
    let set = req(&hir)?;
    (quality(&set) >= 3).then(|| set.join("\x1f"))
}

/// `pattern` without the `i` of a leading flag group: `(?is)x` → `(?s)x`, `(?i)x` → `x`.
fn without_leading_case_flag(pattern: &str) -> String {
    if let Some(rest) = pattern.strip_prefix("(?") {
        if let Some(end) = rest.find(')') {
            let flags = &rest[..end];
            if flags.contains('i') && flags.chars().all(|c| c.is_ascii_alphabetic()) {
                let kept: String = flags.chars().filter(|c| *c != 'i').collect();
                let tail = &rest[end + 1..];
                return if kept.is_empty() {
                    tail.to_string()
                } else {
                    format!("(?{kept}){tail}")
                };
            }
        }
    }
    pattern.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_takes_the_required_literal_and_drops_a_leading_case_flag() {
        assert_eq!(
            regex_prefilter(r"(?i)no kernel image.*device").as_deref(),
            Some("no kernel image")
        );
        assert_eq!(
            regex_prefilter(r"libcu(dart|blas)\.so").as_deref(),
            Some("libcu")
        );
        assert_eq!(regex_prefilter(r"\d+\.\d+"), None);
        assert_eq!(without_leading_case_flag("(?is)x"), "(?s)x");
    }
}
