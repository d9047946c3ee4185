//! The literal prefilter of a regex signature: groups of literals such that every match
//! contains at least one literal of each group, so search compiles and runs the regex only
//! on texts that contain one literal of every group.

/// The most groups kept per regex (the most specific ones).
const MAX_GROUPS: usize = 4;

/// Groups of literals (lowercased) such that every match of the regex contains one literal
/// of each group, keeping only reasonably specific groups; `None` when there is none. In the
/// database, groups are joined with `\x1e` and the literals of a group with `\x1f`.
pub(crate) fn regex_prefilter(pattern: &str) -> Option<String> {
    // Search matches prefilter literals against the lower-cased text, so a leading
    // case-insensitive flag is dropped here: under it every letter is a class, not a literal.
    let p = without_leading_case_flag(pattern);
    let hir = regex_syntax::ParserBuilder::new().build().parse(&p).ok()?;
    let mut groups: Vec<Vec<String>> = required(&hir)
        .into_iter()
        .filter(|g| quality(g) >= 3)
        .collect();
    for g in &mut groups {
        g.sort();
        g.dedup();
    }
    groups.sort();
    groups.dedup();
    // a group holding all literals of another says nothing more
    let implied = |g: &Vec<String>, all: &[Vec<String>]| {
        all.iter()
            .any(|o| o != g && o.iter().all(|l| g.contains(l)))
    };
    let kept: Vec<Vec<String>> = groups
        .iter()
        .filter(|g| !implied(g, &groups))
        .cloned()
        .collect();
    let mut groups = kept;
    groups.sort_by_key(|g| std::cmp::Reverse(quality(g)));
    groups.truncate(MAX_GROUPS);
    if groups.is_empty() {
        return None;
    }
    let joined: Vec<String> = groups.iter().map(|g| g.join("\x1f")).collect();
    Some(joined.join("\x1e"))
}

/// How specific a group is: the length of its shortest literal.
fn quality(group: &[String]) -> usize {
    group.iter().map(|s| s.trim().len()).min().unwrap_or(0)
}

fn literal(h: &regex_syntax::hir::Hir) -> Option<String> {
    match h.kind() {
        regex_syntax::hir::HirKind::Literal(l) => {
            Some(String::from_utf8_lossy(&l.0).to_lowercase())
        }
        _ => None,
    }
}

/// Groups of literals every match of `h` contains one literal of each (empty: none known).
fn required(h: &regex_syntax::hir::Hir) -> Vec<Vec<String>> {
    use regex_syntax::hir::HirKind;
    match h.kind() {
        HirKind::Literal(_) => literal(h).map(|l| vec![vec![l]]).unwrap_or_default(),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Alternation(alts) => {
            // one of the alternatives matches, with all of its groups: each way of taking
            // one group per alternative gives a required group, their union
            // ((a1 & a2) | (b1 & b2) = (a1 | b1) & (a1 | b2) & (a2 | b1) & (a2 | b2))
            let mut combined: Vec<Vec<String>> = vec![Vec::new()];
            for a in alts {
                let mut groups = required(a);
                if groups.is_empty() {
                    return Vec::new();
                }
                groups.sort_by_key(|g| std::cmp::Reverse(quality(g)));
                groups.truncate(3);
                let mut next = Vec::new();
                for c in &combined {
                    for g in &groups {
                        let mut u = c.clone();
                        for l in g {
                            if !u.contains(l) {
                                u.push(l.clone());
                            }
                        }
                        next.push(u);
                    }
                }
                next.retain(|u| u.len() <= 16);
                next.sort_by_key(|u| std::cmp::Reverse(quality(u)));
                next.truncate(8);
                if next.is_empty() {
                    return Vec::new();
                }
                combined = next;
            }
            combined
        }
        HirKind::Concat(children) => {
            // every child matches: each child's groups, and each run of literals
            let mut groups = Vec::new();
            let mut run = String::new();
            for c in children {
                if let Some(l) = literal(c) {
                    run.push_str(&l);
                    continue;
                }
                if !run.is_empty() {
                    groups.push(vec![std::mem::take(&mut run)]);
                }
                groups.extend(required(c));
            }
            if !run.is_empty() {
                groups.push(vec![run]);
            }
            groups
        }
        _ => Vec::new(),
    }
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
            Some("no kernel image\x1edevice")
        );
        assert_eq!(
            regex_prefilter(r"libcu(dart|blas)\.so").as_deref(),
            Some("libcu\x1eblas\x1fdart\x1e.so")
        );
        assert_eq!(regex_prefilter(r"\d+\.\d+"), None);
        assert_eq!(without_leading_case_flag("(?is)x"), "(?s)x");
    }

    #[test]
    fn every_group_is_required_and_weak_ones_are_dropped() {
        // both halves of a `A.{0,300}B` signature must be in the text
        assert_eq!(
            regex_prefilter(r"(?i)(llama\.cpp|ollama)[\s\S]{0,300}no kernel image").as_deref(),
            Some("no kernel image\x1ellama.cpp\x1follama")
        );
        // an optional part is not required; a 2-byte literal is too weak to keep
        assert_eq!(
            regex_prefilter(r"(?i)(CUDA error|error|code[ =]*) ?222\b").as_deref(),
            Some("code\x1fcuda error\x1ferror\x1e222")
        );
        assert_eq!(
            regex_prefilter(r"(?i)\bcuda[ -]13\b").as_deref(),
            Some("cuda")
        );
        // `A.{0,400}B|B.{0,400}A` needs both A and B
        assert_eq!(
            regex_prefilter(r"(?is)\b(orin|jetson)\b.{0,400}no kernel image|no kernel image.{0,400}\b(orin|jetson)\b").as_deref(),
            Some("no kernel image\x1ejetson\x1forin")
        );
        // an alternative without a literal leaves its alternation out
        assert_eq!(
            regex_prefilter(r"(foo|\d+) barbaz").as_deref(),
            Some(" barbaz")
        );
    }
}
