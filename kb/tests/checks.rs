//! The doctor's check catalogue stays consistent with the data and the docs:
//! unique names, categories that exist in `kb/categories.tsv`, every check in
//! `kb/FORMAT.md`, and every cause a check names is itself a check.

use gpukb_kb::diagnose::checks::{is_check, CHECKS, CONTEXT};

#[test]
fn check_names_are_unique_and_causes_are_checks() {
    let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len(), "duplicate check names");
    for c in CHECKS {
        for cause in c.explained_by {
            assert!(is_check(cause), "{} names unknown cause {cause}", c.name);
            assert_ne!(*cause, c.name, "{} explains itself", c.name);
        }
    }
    for c in CONTEXT {
        assert!(is_check(c), "context {c}");
    }
}

#[test]
fn every_category_exists_and_every_check_is_documented() {
    let cats = include_str!("../categories.tsv");
    let format = include_str!("../FORMAT.md");
    for c in CHECKS {
        assert!(
            cats.lines()
                .any(|l| l.split('\t').next() == Some(c.category)),
            "{}: category {} is not in kb/categories.tsv",
            c.name,
            c.category
        );
        assert!(
            format.contains(&format!("| `{}` |", c.name)),
            "{} is not in kb/FORMAT.md",
            c.name
        );
    }
}
