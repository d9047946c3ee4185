//! One name per concept (issue 24 §5): no two `pub struct`, `pub enum` or `pub
//! type` items (`pub(crate)` and other restricted `pub` included) in the `src/`
//! trees of the workspace's crates share a name, so a type's name says what it
//! is without its path: the doctor's `Verdict` is the only `Verdict`, a
//! compatibility decision is an `ImageVerdict`. Read from the source text
//! (comments and string literals aside), so no build is needed. A rename keeps
//! JSON and schemas as they are with `#[serde(rename)]`/`#[schemars(rename)]`.
#![allow(clippy::disallowed_methods)] // reads the workspace's own source files

use source_text::{code_only, crate_sources, is_ident, rust_files, workspace_root};
use std::collections::BTreeMap;

mod source_text;

/// Names that more than one item may carry, each with why the items are one
/// concept (a re-export spelled as a type alias of the same thing). Empty: add
/// an entry only for a true same-concept pair, never to let two concepts share
/// a name.
const SAME_CONCEPT: &[(&str, &str)] = &[];

/// The words and punctuation of `code`, each with its line (from 1).
fn tokens(code: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut line = 1;
    let mut word = String::new();
    for ch in code.chars().chain(std::iter::once(' ')) {
        if is_ident(ch) {
            word.push(ch);
            continue;
        }
        if !word.is_empty() {
            out.push((std::mem::take(&mut word), line));
        }
        if ch == '\n' {
            line += 1;
        } else if !ch.is_whitespace() {
            out.push((ch.to_string(), line));
        }
    }
    out
}

/// The struct, enum and type names `code` (comments and literals blanked)
/// defines with any `pub` visibility, each with its line.
fn public_types(code: &str) -> Vec<(String, usize)> {
    let t = tokens(code);
    let word = |k: usize| t.get(k).map_or("", |w| w.0.as_str());
    let mut out = Vec::new();
    for i in 0..t.len() {
        if word(i) != "pub" {
            continue;
        }
        let mut k = i + 1;
        if word(k) == "(" {
            while k < t.len() && word(k) != ")" {
                k += 1;
            }
            k += 1;
        }
        let name = word(k + 1);
        if matches!(word(k), "struct" | "enum" | "type")
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            out.push((name.to_string(), t[k + 1].1));
        }
    }
    out
}

#[test]
fn no_two_public_types_share_a_name() {
    let root = workspace_root();
    let mut srcs = Vec::new();
    crate_sources(&root, &mut srcs);
    assert!(srcs.len() >= 9, "found only {srcs:?}");
    let mut files = Vec::new();
    for src in &srcs {
        rust_files(src, &mut files);
    }
    files.sort();
    let mut defined: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        for (name, line) in public_types(&code_only(&text)) {
            defined
                .entry(name)
                .or_default()
                .push(format!("{rel}:{line}"));
        }
    }
    // The reader sees the items it is meant to check.
    assert!(
        defined.len() > 200,
        "only {} public types read",
        defined.len()
    );
    let allowed = |n: &str| SAME_CONCEPT.iter().any(|(a, _)| *a == n);
    let shared: Vec<String> = defined
        .iter()
        .filter(|(n, at)| at.len() > 1 && !allowed(n))
        .map(|(n, at)| format!("{n}: {}", at.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "public types that share a name (name each for what it is; #[serde(rename)] and \
         #[schemars(rename)] keep JSON and schemas):\n{}",
        shared.join("\n")
    );
    let stale: Vec<&str> = SAME_CONCEPT
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| defined.get(*n).is_none_or(|at| at.len() < 2))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed but not shared any more: {stale:?}"
    );
}

#[test]
fn the_reader_sees_items_not_comments_or_strings() {
    let code = r##"/// pub struct InDoc
pub struct A;
    pub(crate) enum B { X }
pub(in crate::m) type C<T> = Vec<T>;
struct Private;
const S: &str = "pub struct InString \" pub enum Escaped";
const R: &[u8] = br#"pub enum InRaw "quoted""#;
/* pub type InBlock = u8;
   pub struct InBlockToo; */
fn f<'a>(x: &'a str) -> [char; 2] { ['"', '\''] }
pub fn not_a_type() {}
pub struct D<'a>(pub (u8, u8), &'a str);
"##;
    assert_eq!(
        public_types(&code_only(code)),
        [("A", 2), ("B", 3), ("C", 4), ("D", 12)].map(|(n, l)| (n.to_string(), l))
    );
}
