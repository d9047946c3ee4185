//! Parsers on verbatim copies of real files.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use gpukb_agent::parse::ld_cache::parse_ld_cache;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `ldconfig -p` lines: `\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1`.
fn ldconfig_p(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (lhs, path) = l.trim().split_once(" => ")?;
            Some((lhs.split(" (").next()?.to_string(), path.to_string()))
        })
        .collect()
}

#[test]
fn ld_cache_matches_ldconfig_p_on_debian_12() {
    let bytes = std::fs::read(fixture("ld.so.cache.debian12")).unwrap();
    let ours: Vec<(String, String)> = parse_ld_cache(&bytes)
        .unwrap()
        .into_iter()
        .map(|e| (e.soname, e.path))
        .collect();
    let theirs = ldconfig_p(&std::fs::read_to_string(fixture("ldconfig-p.debian12.txt")).unwrap());
    assert_eq!(ours.len(), 530);
    assert_eq!(ours, theirs);
}

#[test]
fn ld_cache_truncated_anywhere_is_an_error_or_a_prefix() {
    let bytes = std::fs::read(fixture("ld.so.cache.debian12")).unwrap();
    for cut in (0..bytes.len()).step_by(97) {
        let _ = parse_ld_cache(&bytes[..cut]);
    }
}
