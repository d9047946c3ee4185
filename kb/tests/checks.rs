//! The doctor's check registry stays consistent with the knowledge base's data
//! and docs: its categories exist in `kb/categories.tsv`, and `kb/FORMAT.md`'s
//! table of checks is the one the registry renders (`GPUKB_BLESS=1` rewrites
//! it). The registry's own consistency is tested in `kb/doctor/tests/registry.rs`.
#![allow(clippy::disallowed_methods)] // reads and blesses kb/FORMAT.md

use gpukb_doctor::checks::CHECKS;

#[test]
fn every_category_exists() {
    let cats = include_str!("../categories.tsv");
    for c in CHECKS {
        assert!(
            cats.lines()
                .any(|l| l.split('\t').next() == Some(c.category)),
            "{}: category {} is not in kb/categories.tsv",
            c.id,
            c.category
        );
    }
}

const TABLE_HEADER: &str = "| check | layer | finds |";

/// The table of checks as the registry renders it.
fn render_table() -> String {
    let mut s = format!("{TABLE_HEADER}\n| --- | --- | --- |\n");
    for c in CHECKS {
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.id,
            c.layer.id(),
            c.meaning
        ));
    }
    s
}

/// `text` split around its table of checks: (before, table, after).
fn split_table(text: &str) -> (&str, &str, &str) {
    let start = text
        .find(&format!("\n{TABLE_HEADER}\n"))
        .map(|i| i + 1)
        .expect("kb/FORMAT.md has no table of checks (header `| check | layer | finds |`)");
    let mut end = start;
    for line in text[start..].split_inclusive('\n') {
        if !line.starts_with('|') {
            break;
        }
        end += line.len();
    }
    (&text[..start], &text[start..end], &text[end..])
}

#[test]
fn format_table_is_generated_from_the_registry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("FORMAT.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (before, table, after) = split_table(&text);
    let want = render_table();
    if std::env::var_os("GPUKB_BLESS").is_some() {
        std::fs::write(&path, format!("{before}{want}{after}")).unwrap();
        return;
    }
    assert!(
        table == want,
        "kb/FORMAT.md's table of checks is not the registry's: run GPUKB_BLESS=1 cargo test -p gpukb-kb --test checks format_table\n--- FORMAT.md\n{table}--- registry\n{want}"
    );
}
