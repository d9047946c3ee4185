//! The Xid policy table (`cli/monitor/data/xid_policy.csv`): every row has
//! a class and a source, it covers every Xid of the KB's transcription of
//! NVIDIA's catalogue with the catalogue's Immediate Action unchanged, and
//! the Xids issue 22 names have the classes it gives them.
#![allow(clippy::disallowed_methods)] // tests read the committed tables

use gpukb_monitor::xid_policy::{self, Class};
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn every_row_has_a_class_and_a_source() {
    let rows = xid_policy::parse(xid_policy::TABLE_CSV).expect("the committed table parses");
    assert_eq!(rows.len(), xid_policy::table().len(), "duplicate Xids");
    for r in &rows {
        assert!(
            r.source
                .contains("https://docs.nvidia.com/deploy/xid-errors/"),
            "Xid {}: source {:?}",
            r.xid,
            r.source
        );
        assert!(!r.basis.trim().is_empty(), "Xid {}: no basis", r.xid);
        assert!(!r.immediate_action.trim().is_empty(), "Xid {}", r.xid);
        if !r.dcgm_class.is_empty() {
            assert!(
                r.source.contains("NVIDIA/DCGM"),
                "Xid {}: DCGM class without DCGM source",
                r.xid
            );
        }
    }
}

#[test]
fn the_table_covers_the_catalogue_with_its_immediate_actions() {
    let kb = std::fs::read_to_string(repo().join("kb/tables/xid.csv")).unwrap();
    let mut lines = kb.lines();
    let header = xid_policy::split_csv(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (xid, action) = (col("xid"), col("immediate_action"));
    let table = xid_policy::table();
    let mut n = 0;
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f = xid_policy::split_csv(l);
        let code: u32 = f[xid].parse().unwrap();
        let row = table
            .get(&code)
            .unwrap_or_else(|| panic!("Xid {code} of the catalogue has no policy row"));
        let want = if f[action].trim().is_empty() {
            "(none given)"
        } else {
            f[action].trim()
        };
        assert_eq!(row.immediate_action, want, "Xid {code}");
        n += 1;
    }
    assert_eq!(n, table.len(), "rows that are not in the catalogue");
}

#[test]
fn the_classes_issue_22_gives() {
    let t = xid_policy::table();
    for x in [48, 64, 74, 79, 95, 119, 120, 140] {
        assert_eq!(t[&x].class, Class::Fail, "Xid {x}");
    }
    for x in [63, 92, 94] {
        assert_eq!(t[&x].class, Class::Warn, "Xid {x}");
    }
    for x in [13, 31, 43, 45] {
        assert_eq!(t[&x].class, Class::Application, "Xid {x}");
    }
    assert_eq!(t[&154].class, Class::ByRecoveryAction);
    // Every catalogue RESET_GPU / RESTART_BM row drains the node.
    for r in t.values() {
        if matches!(r.immediate_action.as_str(), "RESET_GPU" | "RESTART_BM") {
            assert_eq!(r.class, Class::Fail, "Xid {}", r.xid);
        }
    }
}
