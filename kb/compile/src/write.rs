//! Writes a [`Compiled`] knowledge base: the SQLite database (`gpukb_kb` reads its tables)
//! and the tantivy index (fields and tokenizers `gpukb_kb::Kb` searches with).

use std::path::Path;

use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};
use tantivy::{doc, Index};

use crate::{model, prefilter, tokenize, CompileError, Compiled};

/// The database's tables.
const SCHEMA_SQL: &str = "
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE categories(category TEXT PRIMARY KEY, layer TEXT NOT NULL, meaning TEXT NOT NULL, source TEXT NOT NULL, same_as TEXT NOT NULL);
        CREATE TABLE entries(id TEXT PRIMARY KEY, category TEXT NOT NULL, layer TEXT NOT NULL, title TEXT NOT NULL,
            summary TEXT NOT NULL, frameworks TEXT NOT NULL, json TEXT NOT NULL, toml TEXT NOT NULL);
        CREATE TABLE signatures(entry_id TEXT NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL, pattern TEXT NOT NULL,
            weight REAL NOT NULL, prefilter TEXT);
        CREATE TABLE fixes(entry_id TEXT NOT NULL, idx INTEGER NOT NULL, platform TEXT NOT NULL, title TEXT NOT NULL,
            steps TEXT NOT NULL, note TEXT);
        CREATE TABLE sources(entry_id TEXT NOT NULL, idx INTEGER NOT NULL, url TEXT NOT NULL, title TEXT NOT NULL);
        CREATE TABLE conditions(entry_id TEXT NOT NULL, predicate TEXT NOT NULL);
        CREATE TABLE entry_codes(entry_id TEXT NOT NULL, key TEXT NOT NULL);
        CREATE TABLE examples(entry_id TEXT NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL);
        CREATE TABLE codes(id TEXT PRIMARY KEY, library TEXT NOT NULL, prefix TEXT NOT NULL, key TEXT NOT NULL,
            number INTEGER NOT NULL, name TEXT NOT NULL, message TEXT NOT NULL, description TEXT NOT NULL,
            source TEXT NOT NULL, verified TEXT NOT NULL, linked TEXT NOT NULL);
        CREATE INDEX codes_key ON codes(key);
        CREATE INDEX codes_name ON codes(name COLLATE NOCASE);
        CREATE INDEX codes_number ON codes(number);
        CREATE TABLE build_issues(file TEXT NOT NULL, entry TEXT, message TEXT NOT NULL);";

impl Compiled {
    /// Writes the database to `path` (replacing it), compacted.
    pub fn write_sqlite(&self, path: &Path) -> Result<(), CompileError> {
        let _ = std::fs::remove_file(path);
        let mut db = rusqlite::Connection::open(path)?;
        db.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")?;
        self.fill_sqlite(&mut db)?;
        db.execute_batch("VACUUM;")?;
        Ok(())
    }

    /// Creates the tables in the empty database `db` and fills them.
    pub fn fill_sqlite(&self, db: &mut rusqlite::Connection) -> Result<(), CompileError> {
        db.execute_batch(SCHEMA_SQL)?;
        let tx = db.transaction()?;
        for c in &self.categories {
            tx.execute(
                "INSERT INTO categories VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![c.name, c.layer, c.meaning, c.source, c.same_as],
            )?;
        }
        for c in &self.codes {
            let linked = self
                .links
                .get(&c.key)
                .map(|v| v.join(","))
                .unwrap_or_default();
            tx.execute(
                "INSERT OR REPLACE INTO codes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                rusqlite::params![
                    c.id,
                    c.library,
                    c.prefix,
                    c.key,
                    c.number,
                    c.name,
                    c.message,
                    c.description,
                    c.source,
                    c.verified,
                    linked
                ],
            )?;
        }
        for l in &self.entries {
            let e = &l.entry;
            tx.execute(
                "INSERT INTO entries VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    e.id,
                    e.category,
                    e.layer,
                    e.title,
                    e.summary,
                    model::frameworks_in(&format!("{} {}", e.title, e.keywords.join(" ")))
                        .join(" "),
                    serde_json::to_string(e)?,
                    l.toml
                ],
            )?;
            for (i, s) in e.signatures.iter().enumerate() {
                let (kind, pre) = match (&s.literal, &s.regex) {
                    (Some(l), _) => ("literal", Some(l.to_lowercase())),
                    (None, Some(r)) => ("regex", prefilter::regex_prefilter(r)),
                    _ => continue,
                };
                tx.execute(
                    "INSERT INTO signatures VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    rusqlite::params![e.id, i as i64, kind, s.pattern(), s.weight(), pre],
                )?;
            }
            for (i, f) in e.fixes.iter().enumerate() {
                tx.execute(
                    "INSERT INTO fixes VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    rusqlite::params![
                        e.id,
                        i as i64,
                        f.platform,
                        f.title,
                        serde_json::to_string(&f.steps)?,
                        f.note
                    ],
                )?;
            }
            for (i, s) in e.sources.iter().enumerate() {
                tx.execute(
                    "INSERT INTO sources VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![e.id, i as i64, s.url, s.title],
                )?;
            }
            for c in &e.conditions {
                tx.execute(
                    "INSERT INTO conditions VALUES (?1, ?2)",
                    rusqlite::params![e.id, c.when],
                )?;
            }
            for k in self.entry_keys.get(&e.id).into_iter().flatten() {
                tx.execute(
                    "INSERT INTO entry_codes VALUES (?1, ?2)",
                    rusqlite::params![e.id, k],
                )?;
            }
            for (name, text) in &l.examples {
                tx.execute(
                    "INSERT INTO examples VALUES (?1, ?2, ?3)",
                    rusqlite::params![e.id, name, text],
                )?;
            }
        }
        for i in &self.issues {
            tx.execute(
                "INSERT INTO build_issues VALUES (?1, ?2, ?3)",
                rusqlite::params![i.file, i.entry, i.message],
            )?;
        }
        for (k, v) in [
            ("entries_on_disk", self.entries_on_disk.to_string()),
            ("dir", self.label.clone()),
        ] {
            tx.execute("INSERT INTO meta VALUES (?1, ?2)", rusqlite::params![k, v])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Builds the search index in `dir` (an empty directory: on disk for the build, in
    /// RAM for lint), with the tokenizers registered, committed as one segment.
    pub fn index_in<D: Into<Box<dyn tantivy::Directory>>>(
        &self,
        dir: D,
    ) -> Result<Index, CompileError> {
        let text = |tok: &str| {
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(tok)
                    .set_index_option(IndexRecordOption::WithFreqs),
            )
        };
        let mut sb = Schema::builder();
        let id = sb.add_text_field("id", STRING | STORED);
        let kind = sb.add_text_field("kind", STRING | STORED);
        let title_w = sb.add_text_field("title_w", text(tokenize::ERRTOK));
        let title_s = sb.add_text_field("title_s", text(tokenize::SPLITTOK));
        let body_w = sb.add_text_field("body_w", text(tokenize::ERRTOK));
        let body_s = sb.add_text_field("body_s", text(tokenize::SPLITTOK));
        let ex_w = sb.add_text_field("ex_w", text(tokenize::ERRTOK));
        let ex_s = sb.add_text_field("ex_s", text(tokenize::SPLITTOK));
        let schema = sb.build();
        let index = Index::create(dir, schema, tantivy::IndexSettings::default())?;
        tokenize::register(&index);
        let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 50_000_000)?;
        for l in &self.entries {
            let e = &l.entry;
            let mut body = format!("{}\n{}\n", e.summary, e.keywords.join(" "));
            for s in &e.signatures {
                if let Some(l) = &s.literal {
                    body.push_str(l);
                    body.push('\n');
                }
            }
            body.push_str(&e.codes.join(" "));
            let ex: String = l
                .examples
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let title = format!("{} {}", e.title, e.keywords.join(" "));
            w.add_document(doc!(id => e.id.clone(), kind => "curated",
                title_w => title.clone(), title_s => title,
                body_w => body.clone(), body_s => body, ex_w => ex.clone(), ex_s => ex))?;
        }
        for c in &self.codes {
            let title = format!("{} {} {}", c.name, c.message, c.key);
            let body = format!(
                "{} {}",
                c.description,
                self.links
                    .get(&c.key)
                    .map(|v| v.join(" "))
                    .unwrap_or_default()
            );
            w.add_document(doc!(id => c.id.clone(), kind => "code",
                title_w => title.clone(), title_s => title, body_w => body.clone(), body_s => body))?;
        }
        w.commit()?;
        w.wait_merging_threads()?;
        Ok(index)
    }
}
