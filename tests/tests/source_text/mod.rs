//! Reading the workspace's own Rust sources as text, for the tests that check
//! its shape without a build (`file_graph`, `cli_has_no_domain`, `names`).

// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Every `.rs` file under `dir`, recursively.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every crate's `src/` directory under `dir`: a folder holding `Cargo.toml`
/// and `src/`.
pub(crate) fn crate_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
        out.push(dir.join("src"));
    }
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        if p.is_dir() && !name.starts_with('.') && name != "target" && name != "src" {
            crate_sources(&p, out);
        }
    }
}

pub(crate) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the literal or comment starting at `i` ends (one past it), or `None`
/// when `c[i]` starts plain code.
fn skipped_end(c: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| c.get(k).copied();
    let find = |from: usize, pat: &[char]| {
        (from..c.len())
            .find(|&k| c[k..].starts_with(pat))
            .map_or(c.len(), |k| k + pat.len())
    };
    match (c[i], at(i + 1)) {
        ('/', Some('/')) => Some((i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len())),
        ('/', Some('*')) => Some(find(i + 2, &['*', '/'])),
        ('r', Some('"' | '#')) => {
            // r"…" or r#"…"# (also br"…"), not an identifier ending in r
            let starts = match i.checked_sub(1).map(|p| c[p]) {
                Some('b') => i < 2 || !is_ident(c[i - 2]),
                Some(p) => !is_ident(p),
                None => true,
            };
            let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
            if !starts || at(i + 1 + hashes) != Some('"') {
                return None;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            Some(find(i + 2 + hashes, &close))
        }
        ('"', _) => {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            Some((k + 1).min(c.len()))
        }
        // a char literal ('x', '\n', '\''); a lifetime ('a) has no closing quote
        ('\'', Some('\\')) => Some(find(i + 3, &['\''])),
        ('\'', Some(_)) if at(i + 2) == Some('\'') => Some(i + 3),
        _ => None,
    }
}

/// `text` with comments, string and char literals blanked (newlines kept, so
/// line numbers hold): a type named in a doc comment or a string is no item.
pub(crate) fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match skipped_end(&c, i) {
            Some(end) => {
                let end = end.max(i + 1);
                out.extend(
                    c[i..end]
                        .iter()
                        .map(|&x| if x == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            None => {
                out.push(c[i]);
                i += 1;
            }
        }
    }
    out
}
