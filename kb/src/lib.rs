//! The gpukb knowledge base: diagnosis entries kept as reviewed data files,
//! compiled into SQLite and a tantivy index that ship inside the binary.
//!
//! [`Kb::open`] opens the embedded copies (milliseconds, no file or env access);
//! [`Kb::search`] ranks diagnoses for a pasted error, [`Kb::explain`] looks up error codes,
//! [`Kb::lint`] re-checks the embedded data; [`Kb::compile_dir`] compiles a knowledge-base
//! directory in memory (for `gpukb kb lint DIR`).
#![forbid(unsafe_code)]
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agreement;
pub mod confidence;
pub mod env_report;
pub mod error;
pub mod eval;
pub mod explain;
pub mod fill_step;
pub mod link;
pub mod lint;
pub mod memorised;
pub mod normalize;
pub mod placement;
pub mod ruling;
pub mod search;
pub mod signals;
mod static_dir;
pub mod unwrap;
pub mod vocabulary;
pub mod window;

/// The entry schema and its checks, shared with `kb/build.rs` and `gpukb kb lint DIR`.
pub use gpukb_kb_compile::model;
/// The error-text tokenizers, shared with the index build.
pub use gpukb_kb_compile::tokenize;

use std::cell::OnceCell;

use serde::Serialize;

pub use error::KbError;
pub use explain::CodeInfo;
pub use lint::LintIssue;
pub use model::{Answer, Citation, Confirm, Entry, Fix};
pub use ruling::{Environment, MachineFacts, RuledOut};
pub use search::{
    Distinguish, DistinguishAnswer, Hit, HitKind, MachineVerdict, Query, Ranking, RuleOutcome,
    RuleVerdict, TextEvidence, Weights, WEIGHTS,
};
pub use signals::Signals;

static KB_SQLITE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kb.sqlite"));
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_index.rs"));
}
/// The search tables of the embedded KB, generated from its database by `build.rs`.
pub(crate) mod embedded_tables {
    use gpukb_kb_compile::matcher::{sp, EntryMeta, Pat, SigRow, Tables};
    use std::borrow::Cow;
    include!(concat!(env!("OUT_DIR"), "/matcher_tables.rs"));
}

/// The date the dated fact tables this knowledge base judges with were last
/// checked against their sources: the later of the driver rules'
/// (`gpukb_facts::compat::DRIVER_TABLE_AS_OF`) and the torch build table's
/// (`gpukb_facts::select::TORCH_BUILDS_AS_OF`). ISO 8601 (`YYYY-MM-DD`).
pub fn as_of() -> &'static str {
    let a = gpukb_facts::compat::DRIVER_TABLE_AS_OF;
    let b = gpukb_facts::select::TORCH_BUILDS_AS_OF;
    // ISO dates compare as strings.
    if a >= b {
        a
    } else {
        b
    }
}

/// Tantivy fields of the embedded index.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub id: tantivy::schema::Field,
    pub kind: tantivy::schema::Field,
    pub text: [(tantivy::schema::Field, f32); 6],
}

/// The opened knowledge base.
pub struct Kb {
    pub(crate) db: rusqlite::Connection,
    /// The tantivy index for search, opened on first use (the doctor and the agent never
    /// need it).
    text: OnceCell<Result<TextIndex, String>>,
    /// An index built in memory (`kb lint DIR`), else the embedded one is opened.
    built: Option<tantivy::Index>,
    pub(crate) matcher: OnceCell<search::Matcher>,
    /// The search tables built at build time (the embedded KB), else built on first use.
    pub(crate) tables: Option<&'static gpukb_kb_compile::matcher::Tables>,
}

/// An opened tantivy index.
pub(crate) struct TextIndex {
    pub searcher: tantivy::Searcher,
    pub fields: Fields,
}

impl TextIndex {
    fn open(index: tantivy::Index) -> Result<TextIndex, KbError> {
        tokenize::register(&index);
        let schema = index.schema();
        let f = |n: &str| schema.get_field(n).map_err(KbError::from);
        let fields = Fields {
            id: f("id")?,
            kind: f("kind")?,
            text: [
                (f("title_w")?, 2.0),
                (f("title_s")?, 1.0),
                (f("body_w")?, 1.5),
                (f("body_s")?, 0.6),
                (f("ex_w")?, 1.0),
                (f("ex_s")?, 0.4),
            ],
        };
        let reader = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()?;
        Ok(TextIndex {
            searcher: reader.searcher(),
            fields,
        })
    }
}

/// A short listing row.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EntrySummary {
    /// Entry id.
    pub id: String,
    /// Category.
    pub category: String,
    /// Layer.
    pub layer: String,
    /// Title.
    pub title: String,
}

impl EntrySummary {
    /// Reads `SELECT id, category, layer, title` columns.
    pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntrySummary> {
        Ok(EntrySummary {
            id: r.get(0)?,
            category: r.get(1)?,
            layer: r.get(2)?,
            title: r.get(3)?,
        })
    }
}

impl Kb {
    /// Opens the knowledge base embedded in the binary.
    pub fn open() -> Result<Kb, KbError> {
        let mut db = rusqlite::Connection::open_in_memory()?;
        db.deserialize_bytes("main", KB_SQLITE)?;
        // Read pages in place rather than copying each into SQLite's page cache.
        db.pragma_update(None, "mmap_size", KB_SQLITE.len() as i64)?;
        Ok(Kb {
            db,
            text: OnceCell::new(),
            built: None,
            matcher: OnceCell::new(),
            tables: Some(&embedded_tables::TABLES),
        })
    }

    /// A knowledge base from its compiled database and index (as `gpukb-kb-compile`
    /// writes them).
    pub(crate) fn from_compiled(
        db: rusqlite::Connection,
        index: tantivy::Index,
    ) -> Result<Kb, KbError> {
        let kb = Kb {
            db,
            text: OnceCell::new(),
            built: Some(index),
            matcher: OnceCell::new(),
            tables: None,
        };
        kb.text_index()?;
        Ok(kb)
    }

    /// The tantivy index, opened on first use.
    pub(crate) fn text_index(&self) -> Result<&TextIndex, KbError> {
        let opened = self.text.get_or_init(|| {
            let index = match &self.built {
                Some(i) => Ok(i.clone()),
                None => tantivy::Index::open(static_dir::StaticDirectory {
                    files: embedded::INDEX_FILES,
                })
                .map_err(KbError::from),
            };
            index.and_then(TextIndex::open).map_err(|e| e.to_string())
        });
        opened.as_ref().map_err(|e| KbError::Index(e.clone()))
    }

    /// Number of curated entries embedded.
    pub fn len(&self) -> Result<usize, KbError> {
        let n: i64 = self
            .db
            .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Entry ids by the check their `[[conditions]] when` names, from the search tables
    /// (embedded ones read no database page).
    pub fn entries_by_condition(
        &self,
    ) -> Result<std::collections::BTreeMap<String, Vec<String>>, KbError> {
        let t = &self.matcher()?.t;
        let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for e in t.entries.iter() {
            for c in t.strs(e.conditions) {
                out.entry(c.to_string())
                    .or_default()
                    .push(t.str(e.id).to_string());
            }
        }
        Ok(out)
    }

    /// Whether no curated entry is embedded.
    pub fn is_empty(&self) -> Result<bool, KbError> {
        Ok(self.len()? == 0)
    }

    /// A curated entry by id.
    pub fn entry(&self, id: &str) -> Result<Option<Entry>, KbError> {
        // Search asks for several entries: the statement is compiled once.
        let json: Option<String> = self
            .db
            .prepare_cached("SELECT json FROM entries WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        json.map(|j| serde_json::from_str(&j).map_err(KbError::from))
            .transpose()
    }

    /// Curated entries, optionally of one category, sorted by id, from the search tables.
    pub fn list(&self, category: Option<&str>) -> Result<Vec<EntrySummary>, KbError> {
        let t = &self.matcher()?.t;
        Ok(t.entries
            .iter()
            .filter(|e| category.is_none_or(|c| t.str(e.category) == c))
            .map(|e| EntrySummary {
                id: t.str(e.id).to_string(),
                category: t.str(e.category).to_string(),
                layer: t.str(e.layer).to_string(),
                title: t.str(e.title).to_string(),
            })
            .collect())
    }

    /// Categories with their layer and meaning.
    pub fn categories(&self) -> Result<Vec<(String, String, String)>, KbError> {
        let mut st = self
            .db
            .prepare("SELECT category, layer, meaning FROM categories ORDER BY category")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(KbError::from)
    }

    /// Example texts of an entry: (file name, text).
    pub fn examples(&self, id: &str) -> Result<Vec<(String, String)>, KbError> {
        let mut st = self
            .db
            .prepare("SELECT name, text FROM examples WHERE entry_id = ?1 ORDER BY name")?;
        let rows = st.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(KbError::from)
    }

    /// Number of entries that were on disk when the KB was built.
    pub fn entries_on_disk(&self) -> Result<usize, KbError> {
        let v: String = self.db.query_row(
            "SELECT value FROM meta WHERE key = 'entries_on_disk'",
            [],
            |r| r.get(0),
        )?;
        Ok(v.parse().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_from_the_embedded_tables_equal_those_built_from_the_database() {
        let kb = Kb::open().expect("embedded KB");
        let mut sql = Kb::open().expect("embedded KB");
        sql.tables = None;
        assert_eq!(
            kb.entries_by_condition().unwrap(),
            sql.entries_by_condition().unwrap()
        );
        let ids = |v: Vec<EntrySummary>| {
            v.into_iter()
                .map(|e| (e.id, e.category, e.layer, e.title))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(kb.list(None).unwrap()), ids(sql.list(None).unwrap()));
        let one = ids(kb.list(Some("driver_too_old")).unwrap());
        assert!(!one.is_empty());
        assert_eq!(one, ids(sql.list(Some("driver_too_old")).unwrap()));
    }
}
