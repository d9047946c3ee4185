//! `lint`: re-checks a knowledge base: the embedded one, or a directory compiled in memory
//! by [`Kb::compile_dir`] with the build's own code (`gpukb-kb-compile`), so both get the
//! same checks. Reports the problems the compile recorded (schema, categories, code
//! references, signature coverage), unknown rule predicates, and every example whose top
//! search hit is not its own entry; and, with labelled eval pastes, KB text copied from them
//! ([`Kb::lint_eval`], the rule in [`crate::memorised`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::memorised::{self, KbText, Paste};
use crate::{Kb, KbError};

/// One lint problem, tied to a file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LintIssue {
    /// The file under the knowledge-base directory's name, e.g. `kb/entries/foo.toml`,
    /// `kb/categories.tsv:12`.
    pub file: String,
    /// The entry it belongs to, when it belongs to one.
    pub entry: Option<String>,
    /// What is wrong, precisely.
    pub message: String,
}

impl std::fmt::Display for LintIssue {
    /// `file: entry: message`, or `file: message` for a problem outside any entry.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.entry {
            Some(e) => write!(f, "{}: {e}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl Kb {
    /// Compiles the knowledge-base directory `dir` (`entries/`, `examples/`,
    /// `categories.tsv`, `tables/`) in memory, with the checks and output of the build,
    /// fatal problems included as lint problems; `label` names `dir` in
    /// [`LintIssue::file`]. Errors only when `dir/entries` cannot be read or the compiled
    /// data cannot be opened.
    pub fn compile_dir(dir: &Path, label: &str) -> Result<Kb, KbError> {
        let checks: Vec<&str> = gpukb_doctor::CheckId::ALL
            .iter()
            .map(|c| c.name())
            .collect();
        let compiled = gpukb_kb_compile::compile(dir, label, &checks)?;
        let mut db = rusqlite::Connection::open_in_memory()?;
        compiled.fill_sqlite(&mut db)?;
        let index = compiled.index_in(tantivy::directory::RamDirectory::create())?;
        Kb::from_compiled(db, index)
    }

    /// How the compiled directory is named in lint problems (`kb` for the embedded one).
    fn dir_label(&self) -> String {
        self.db
            .query_row("SELECT value FROM meta WHERE key = 'dir'", [], |r| r.get(0))
            .unwrap_or_else(|_| "kb".into())
    }

    /// All lint problems; empty when the knowledge base is clean.
    pub fn lint(&self) -> Result<Vec<LintIssue>, KbError> {
        let dir = self.dir_label();
        let mut out = Vec::new();
        {
            let mut st = self
                .db
                .prepare("SELECT file, entry, message FROM build_issues")?;
            let rows = st.query_map([], |r| {
                Ok(LintIssue {
                    file: r.get(0)?,
                    entry: r.get(1)?,
                    message: r.get(2)?,
                })
            })?;
            for r in rows {
                out.push(r?);
            }
        }
        for e in self.list(None)? {
            for (name, text) in self.examples(&e.id)? {
                let hits = self.search(&text, None, 3)?;
                match hits.first() {
                    Some(h) if h.id == e.id => {}
                    Some(h) => out.push(LintIssue {
                        file: format!("{dir}/examples/{}/{name}", e.id),
                        entry: Some(e.id.clone()),
                        message: format!(
                            "top search hit is {} (score {:.1}), not {}{}",
                            h.id,
                            h.score,
                            e.id,
                            hits.iter()
                                .position(|x| x.id == e.id)
                                .map(|p| format!(" (it ranks #{})", p + 1))
                                .unwrap_or_default()
                        ),
                    }),
                    None => out.push(LintIssue {
                        file: format!("{dir}/examples/{}/{name}", e.id),
                        entry: Some(e.id.clone()),
                        message: format!("search finds nothing; expected {}", e.id),
                    }),
                }
            }
        }
        Ok(out)
    }

    /// Examples and signature patterns that copy paste-specific text of `pastes` (the
    /// memorisation rule of [`crate::memorised`]). `extra_generic` is primary-source text
    /// besides the KB's own code tables (e.g. `shared/research/data/*.csv`).
    pub fn lint_eval(
        &self,
        pastes: &[Paste],
        extra_generic: &str,
    ) -> Result<Vec<LintIssue>, KbError> {
        let dir = self.dir_label();
        let mut texts = Vec::new();
        // The entry each checked file belongs to.
        let mut owner: BTreeMap<String, String> = BTreeMap::new();
        for e in self.list(None)? {
            owner.insert(format!("{dir}/entries/{}.toml", e.id), e.id.clone());
            for (name, text) in self.examples(&e.id)? {
                let file = format!("{dir}/examples/{}/{name}", e.id);
                owner.insert(file.clone(), e.id.clone());
                texts.push(KbText {
                    file,
                    what: "example".into(),
                    text,
                });
            }
        }
        {
            let mut st = self.db.prepare(
                "SELECT entry_id, idx, kind, pattern FROM signatures ORDER BY entry_id, idx",
            )?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?;
            for r in rows {
                let (id, idx, kind, pattern) = r?;
                let text = if kind == "regex" {
                    memorised::regex_as_text(&pattern)
                } else {
                    pattern
                };
                texts.push(KbText {
                    file: format!("{dir}/entries/{id}.toml"),
                    what: format!("signature #{}", idx + 1),
                    text,
                });
            }
        }
        let mut generic = self.code_table_text()?;
        generic.push('\n');
        generic.push_str(extra_generic);
        generic.push('\n');
        generic.push_str(&memorised::releases_text());
        let mut messages = self.code_messages()?;
        messages.extend(memorised::product_messages());
        Ok(memorised::find_copies(&texts, pastes, &generic, &messages)
            .into_iter()
            .map(|c| LintIssue {
                entry: owner.get(&c.file).cloned(),
                file: c.file,
                message: format!(
                    "{} copies {} of eval case {}: \"{}\" (write the failure, not the paste: see kb/FORMAT.md, memorisation lint)",
                    c.what,
                    c.kind.word(),
                    c.case_id,
                    c.text
                ),
            })
            .collect())
    }

    /// The exact message strings of the code tables.
    fn code_messages(&self) -> Result<Vec<String>, KbError> {
        let mut st = self.db.prepare("SELECT message FROM codes")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(KbError::from)
    }

    /// The code tables' names, messages and descriptions (primary-source text).
    fn code_table_text(&self) -> Result<String, KbError> {
        let mut st = self
            .db
            .prepare("SELECT name || ' ' || message || ' ' || description FROM codes")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = String::new();
        for r in rows {
            out.push_str(&r?);
            out.push('\n');
        }
        Ok(out)
    }
}
