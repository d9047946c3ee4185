//! A seeded corruption run (issue 12 §7): every recorded root and capture,
//! with one of its files cut, bit-flipped, filled with junk or replaced by
//! binary noise, goes through the whole fingerprint and the diagnosis. No
//! case may panic. The seed is printed and fixed (set `GPUKB_CORRUPT_SEED` to
//! replay another run); the number of cases is fixed, so a regression fails CI.
#![allow(clippy::disallowed_methods)] // tests build fixture trees

use gpukb_agent::host::Host;
use gpukb_agent::{fingerprint, Settings};
use gpukb_tests::{fixture, Rng};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            files(&p, out);
        } else if m.is_file() && m.len() < 4 << 20 {
            out.push(p);
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        let dest = to.join(e.file_name());
        if m.is_dir() {
            copy_dir(&p, &dest);
        } else if m.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).unwrap(), &dest).unwrap();
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn corrupt(bytes: &mut Vec<u8>, rng: &mut Rng) -> &'static str {
    match rng.below(5) {
        0 => {
            let n = rng.below(bytes.len() + 1);
            bytes.truncate(n);
            "cut"
        }
        1 => {
            for _ in 0..1 + rng.below(16) {
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
            "bit flips"
        }
        2 => {
            let at = rng.below(bytes.len() + 1);
            let junk: Vec<u8> = (0..1 + rng.below(512))
                .map(|_| rng.next_u64() as u8)
                .collect();
            bytes.splice(at..at, junk);
            "junk inserted"
        }
        3 => {
            *bytes = (0..rng.below(8192)).map(|_| rng.next_u64() as u8).collect();
            "replaced by noise"
        }
        _ => {
            bytes.clear();
            "emptied"
        }
    }
}

#[test]
fn corrupted_roots_and_captures_never_panic() {
    let seed: u64 = std::env::var("GPUKB_CORRUPT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6770_756b_6230_3031);
    println!("corruption seed {seed}");
    let mut rng = Rng(seed);
    let mut bases: Vec<(PathBuf, bool)> = Vec::new();
    for e in std::fs::read_dir(fixture("")).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with("jetson-") {
            bases.push((p, false));
        } else if p.join("capture.json").is_file() {
            bases.push((p, true));
        }
    }
    bases.sort();
    assert!(bases.len() >= 8, "{bases:?}");
    const CASES: usize = 240;
    for case in 0..CASES {
        let (base, replay) = &bases[case % bases.len()];
        let t = tempfile::tempdir().unwrap();
        copy_dir(base, t.path());
        let mut all = Vec::new();
        files(t.path(), &mut all);
        all.retain(|p| !p.ends_with("SOURCE.md") && !p.ends_with("EXPECT"));
        let victim = all[rng.below(all.len())].clone();
        let mut bytes = std::fs::read(&victim).unwrap();
        let how = corrupt(&mut bytes, &mut rng);
        std::fs::write(&victim, &bytes).unwrap();
        let what = format!(
            "case {case} (seed {seed}): {} {how}",
            victim.strip_prefix(t.path()).unwrap().display()
        );
        let dir = t.path().to_path_buf();
        let replay = *replay;
        let r = std::panic::catch_unwind(move || {
            let host = if replay {
                match Host::replay(&dir) {
                    Ok(h) => h,
                    Err(_) => return, // a corrupt journal is refused in one line: fine
                }
            } else {
                Host::root_dir(&dir)
            };
            let fp = fingerprint(Arc::new(host), &Settings::default());
            let _ = gpukb_doctor::diagnose(&fp, "corrupted");
            let _ = serde_json::to_string(&fp).unwrap();
        });
        assert!(r.is_ok(), "panicked on {what}");
    }
}
