//! The sourced data tables compiled into the crate:
//!
//! * `jetson/data/jetpack.csv`: L4T release → JetPack → Ubuntu / CUDA /
//!   cuDNN / TensorRT, one row per L4T release, each with its `source`.
//! * `jetson/data/modules.csv`: module part number (`p3767-0005`) → module
//!   name, family, RAM and SoC, each with its `source`.
//!
//! An L4T release missing from the table is not an error: [`lookup_l4t`]
//! returns [`L4tLookup::Unknown`] with the JetPack major inferred from the
//! R-major and the nearest older row of the same R-major.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::devicetree::Soc;
use crate::version::{jetpack_major_for_r, L4tVersion};

const JETPACK_CSV: &str = include_str!("../data/jetpack.csv");
const MODULES_CSV: &str = include_str!("../data/modules.csv");

/// One row of `jetpack.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JetpackRow {
    /// L4T release.
    pub l4t: L4tVersion,
    /// JetPack release as NVIDIA names it (`5.1.2`, `6.1 (rev1)`, `7.2`).
    pub jetpack: String,
    /// Ubuntu release of the root filesystem (`22.04`).
    pub ubuntu: String,
    /// CUDA toolkit (`12.6.68`); `None` where unverified.
    pub cuda: Option<String>,
    /// cuDNN (`9.3.0.75`); `None` where unverified.
    pub cudnn: Option<String>,
    /// TensorRT (`10.3.0.30`); `None` where unverified.
    pub tensorrt: Option<String>,
    /// `primary`, `secondary` or `partial`.
    pub verified: String,
    /// Free text.
    pub notes: String,
    /// Where the row comes from.
    pub source: String,
}

/// One row of `modules.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModuleRow {
    /// `p3767-0005`.
    pub part_number: String,
    /// `Jetson Orin Nano 8GB (developer kit module)`.
    pub module: String,
    /// `Orin Nano`.
    pub family: String,
    /// Module RAM in GB; `None` where unverified.
    pub ram_gb: Option<u32>,
    /// SoC.
    pub soc: Option<Soc>,
    /// `primary` / `secondary`.
    pub verified: String,
    /// Free text.
    pub notes: String,
    /// Where the row comes from.
    pub source: String,
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// All JetPack rows, sorted by L4T release.
pub fn jetpack_table() -> &'static [JetpackRow] {
    static TABLE: OnceLock<Vec<JetpackRow>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut rows: Vec<JetpackRow> = crate::csv::parse(JETPACK_CSV)
            .into_iter()
            .filter_map(|r| {
                let get = |k: &str| r.get(k).map(String::as_str).unwrap_or("");
                Some(JetpackRow {
                    l4t: L4tVersion::parse(get("l4t")).ok()?,
                    jetpack: non_empty(get("jetpack"))?,
                    ubuntu: get("ubuntu").trim().to_string(),
                    cuda: non_empty(get("cuda")),
                    cudnn: non_empty(get("cudnn")),
                    tensorrt: non_empty(get("tensorrt")),
                    verified: get("verified").trim().to_string(),
                    notes: get("notes").trim().to_string(),
                    source: get("source").trim().to_string(),
                })
            })
            .collect();
        rows.sort_by_key(|r| r.l4t);
        rows
    })
}

/// All module rows.
pub fn module_table() -> &'static [ModuleRow] {
    static TABLE: OnceLock<Vec<ModuleRow>> = OnceLock::new();
    TABLE.get_or_init(|| {
        crate::csv::parse(MODULES_CSV)
            .into_iter()
            .filter_map(|r| {
                let get = |k: &str| r.get(k).map(String::as_str).unwrap_or("");
                Some(ModuleRow {
                    part_number: non_empty(get("part_number"))?.to_ascii_lowercase(),
                    module: non_empty(get("module"))?,
                    family: get("family").trim().to_string(),
                    ram_gb: get("ram_gb").trim().parse().ok(),
                    soc: Soc::from_token(get("soc")),
                    verified: get("verified").trim().to_string(),
                    notes: get("notes").trim().to_string(),
                    source: get("source").trim().to_string(),
                })
            })
            .collect()
    })
}

/// Look a module part number up (`p3767-0005`; case-insensitive).
pub fn lookup_module(part_number: &str) -> Option<&'static ModuleRow> {
    let p = part_number.trim().to_ascii_lowercase();
    module_table().iter().find(|m| m.part_number == p)
}

/// The answer of [`lookup_l4t`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum L4tLookup {
    /// The release is in the table.
    Known(JetpackRow),
    /// The release is not in the table.
    Unknown {
        /// The release asked for.
        l4t: L4tVersion,
        /// JetPack major from the R-major (R32→4, R34/R35→5, R36→6, R38+→7).
        inferred_jetpack_major: Option<u32>,
        /// The newest table row of the same R-major that is older than `l4t`.
        nearest_older: Option<JetpackRow>,
        /// True when `l4t` is newer than every row of the table.
        newer_than_table: bool,
    },
}

/// The newest L4T release in the table.
pub fn latest_known_l4t() -> Option<L4tVersion> {
    jetpack_table().last().map(|r| r.l4t)
}

/// Look an L4T release up. Never fails: an unknown release gets the JetPack
/// major inferred from its R-major.
pub fn lookup_l4t(l4t: L4tVersion) -> L4tLookup {
    let table = jetpack_table();
    if let Some(row) = table.iter().find(|r| r.l4t == l4t) {
        return L4tLookup::Known(row.clone());
    }
    let nearest_older = table
        .iter()
        .filter(|r| r.l4t.major == l4t.major && r.l4t < l4t)
        .max_by_key(|r| r.l4t)
        .cloned();
    L4tLookup::Unknown {
        l4t,
        inferred_jetpack_major: jetpack_major_for_r(l4t.major),
        nearest_older,
        newer_than_table: latest_known_l4t().is_some_and(|last| l4t > last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_completely() {
        let csv_rows = crate::csv::parse(JETPACK_CSV).len();
        assert_eq!(
            jetpack_table().len(),
            csv_rows,
            "every jetpack.csv row parses"
        );
        assert!(csv_rows >= 45);
        assert_eq!(module_table().len(), crate::csv::parse(MODULES_CSV).len());
        for r in jetpack_table() {
            assert!(!r.source.is_empty(), "{} has a source", r.l4t);
            assert!(
                r.jetpack
                    .starts_with(&jetpack_major_for_r(r.l4t.major).unwrap().to_string()),
                "{} → {} agrees with the R-major rule",
                r.l4t,
                r.jetpack
            );
        }
        for m in module_table() {
            assert!(!m.source.is_empty());
            assert!(m.soc.is_some(), "{}", m.part_number);
        }
    }

    #[test]
    fn popular_wrong_claims() {
        // shared/research/compat-facts.md §7: JetPack 6.x is R36, and R35.4.1
        // is JetPack 5.1.2, not 6.2.2.
        let L4tLookup::Known(r) = lookup_l4t(L4tVersion::new(35, 4, 1)) else {
            panic!("35.4.1 is in the table")
        };
        assert_eq!(r.jetpack, "5.1.2");
        let L4tLookup::Known(r) = lookup_l4t(L4tVersion::new(36, 5, 0)) else {
            panic!("36.5.0 is in the table")
        };
        assert_eq!(r.jetpack, "6.2.2");
        assert_eq!(r.cuda.as_deref(), Some("12.6.68"));
    }

    #[test]
    fn unknown_release() {
        match lookup_l4t(L4tVersion::new(39, 2, 1)) {
            L4tLookup::Unknown {
                inferred_jetpack_major,
                nearest_older,
                newer_than_table,
                ..
            } => {
                assert_eq!(inferred_jetpack_major, Some(7));
                assert_eq!(nearest_older.unwrap().l4t, L4tVersion::new(39, 2, 0));
                assert!(newer_than_table);
            }
            other => panic!("{other:?}"),
        }
        match lookup_l4t(L4tVersion::new(36, 4, 5)) {
            L4tLookup::Unknown {
                newer_than_table, ..
            } => assert!(!newer_than_table),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn modules() {
        let m = lookup_module("P3767-0005").unwrap();
        assert_eq!(m.family, "Orin Nano");
        assert_eq!(m.ram_gb, Some(8));
        assert!(lookup_module("p9999-0000").is_none());
    }
}
