//! Compiles a knowledge-base directory (`entries/*.toml`, `examples/<id>/*`,
//! `categories.tsv`, `tables/*.csv`; layout in `kb/FORMAT.md`): reads and validates it
//! ([`compile`]), then writes the SQLite database ([`Compiled::write_sqlite`],
//! [`Compiled::fill_sqlite`]) and the tantivy index ([`Compiled::index_in`]).
//!
//! One code path for two callers: `kb/build.rs` (a build-dependency) embeds the result in
//! the binary and fails the build on [`Issue::fatal`] problems; `gpukb kb lint DIR` (through
//! `gpukb_kb::Kb::compile_dir`) compiles a directory in memory and reports every problem
//! without rebuilding anything.
#![forbid(unsafe_code)]
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]
// This crate reads the knowledge base's own data files, never machine state.
#![allow(clippy::disallowed_methods)]

pub mod fix_steps;
pub mod model;
pub mod tokenize;

mod examples;
pub mod matcher;
mod prefilter;
mod read;
mod tables;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub use tables::CodeRow;

/// Errors that stop a compile: the directory cannot be read at all, or the output cannot
/// be written. Problems in the data are [`Issue`]s instead.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The directory, or its `entries/` folder, cannot be listed.
    #[error("{path}: not a readable knowledge-base directory ({path}/entries: {error})")]
    Unreadable { path: String, error: std::io::Error },
    /// Writing the SQLite database failed.
    #[error("knowledge-base database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Building the tantivy index failed.
    #[error("knowledge-base index: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// An entry could not be encoded as JSON (a bug).
    #[error("knowledge-base record: {0}")]
    Json(#[from] serde_json::Error),
}

/// One problem in the data, tied to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The file as the caller labels it (`kb/entries/foo.toml`, `kb/categories.tsv:12`).
    pub file: String,
    /// The entry the problem belongs to, when it belongs to one.
    pub entry: Option<String>,
    /// What is wrong, precisely.
    pub message: String,
    /// Whether the build fails on it: the entry (or row) is unusable and left out.
    pub fatal: bool,
}

/// One row of `categories.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub name: String,
    pub layer: String,
    pub meaning: String,
    pub source: String,
    /// Comma-separated eval categories naming the same cause (may be empty).
    pub same_as: String,
}

/// A parsed entry, its TOML text, and its examples (file name, text without the
/// `# source:` lines).
#[derive(Debug, Clone)]
pub struct LoadedEntry {
    pub entry: model::Entry,
    pub toml: String,
    pub examples: Vec<(String, String)>,
}

/// A validated knowledge base, ready to be written.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    /// How the directory is named in [`Issue::file`] (`kb`, or the path given to lint).
    pub label: String,
    pub categories: Vec<Category>,
    pub codes: Vec<CodeRow>,
    /// Entries without fatal problems, sorted by file name.
    pub entries: Vec<LoadedEntry>,
    /// Code key -> ids of the entries that name it.
    pub links: BTreeMap<String, Vec<String>>,
    /// Entry id -> the code keys it names.
    pub entry_keys: BTreeMap<String, Vec<String>>,
    /// Every problem found, fatal or not, in the order found.
    pub issues: Vec<Issue>,
    /// `*.toml` files in `entries/`, usable or not.
    pub entries_on_disk: usize,
}

impl Compiled {
    /// The problems the build fails on.
    pub fn fatal(&self) -> impl Iterator<Item = &Issue> {
        self.issues.iter().filter(|i| i.fatal)
    }
}

/// Collects issues with file names under one label.
pub(crate) struct Issues {
    label: String,
    pub(crate) list: Vec<Issue>,
}

impl Issues {
    /// `label/rel`.
    pub(crate) fn file(&self, rel: &str) -> String {
        format!("{}/{rel}", self.label)
    }
    pub(crate) fn push(&mut self, rel: &str, entry: Option<&str>, message: String, fatal: bool) {
        let file = self.file(rel);
        self.list.push(Issue {
            file,
            entry: entry.map(str::to_string),
            message,
            fatal,
        });
    }
}

/// Reads and validates the knowledge base in `dir`; file names in issues start with
/// `label` (`kb` for the repository's own). `checks` are the doctor's check names: an
/// entry whose `[[conditions]] when` names another is fatal. Only an unreadable `dir` or
/// `dir/entries` is an error; everything wrong inside is an [`Issue`].
pub fn compile(dir: &Path, label: &str, checks: &[&str]) -> Result<Compiled, CompileError> {
    let label = match label.trim_end_matches('/') {
        "" => label.to_string(),
        l => l.to_string(),
    };
    let files = entry_files(dir)?;
    let mut issues = Issues {
        label: label.clone(),
        list: Vec::new(),
    };
    let categories = tables::read_categories(dir, &mut issues);
    let codes = tables::read_codes(dir, &mut issues);
    let cat_set: BTreeSet<&str> = categories.iter().map(|c| c.name.as_str()).collect();

    let mut entries: Vec<LoadedEntry> = Vec::new();
    let mut ids: BTreeSet<String> = BTreeSet::new();
    for f in &files {
        let Some(loaded) = load_entry(dir, f, checks, &cat_set, &mut issues) else {
            continue;
        };
        if !ids.insert(loaded.entry.id.clone()) {
            let rel = format!("entries/{}", file_name(f));
            issues.push(
                &rel,
                Some(&file_stem(f)),
                format!("duplicate id {}", loaded.entry.id),
                true,
            );
            continue;
        }
        entries.push(loaded);
    }
    check_rules_out(&entries, &ids, &mut issues);
    let (links, entry_keys) = tables::resolve_codes(&codes, &entries, &mut issues);
    Ok(Compiled {
        label,
        categories,
        codes,
        entries,
        links,
        entry_keys,
        issues: issues.list,
        entries_on_disk: files.len(),
    })
}

/// The `*.toml` files of `dir/entries`, sorted.
fn entry_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, CompileError> {
    let entries_dir = dir.join("entries");
    let listing = std::fs::read_dir(&entries_dir).map_err(|error| CompileError::Unreadable {
        path: dir.display().to_string(),
        error,
    })?;
    let mut files: Vec<std::path::PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The file name of `f`, lossily.
fn file_name(f: &Path) -> String {
    f.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// The file stem of `f`, lossily.
fn file_stem(f: &Path) -> String {
    f.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// Reads, parses and checks one entry file with its examples; `None` when a structural
/// problem leaves it out (every problem found is pushed to `issues`).
fn load_entry(
    dir: &Path,
    f: &Path,
    checks: &[&str],
    cat_set: &BTreeSet<&str>,
    issues: &mut Issues,
) -> Option<LoadedEntry> {
    let rel = format!("entries/{}", file_name(f));
    let stem = file_stem(f);
    let text = match read::text(f, read::ENTRY_CAP) {
        Ok(t) => t,
        Err(e) => {
            issues.push(&rel, Some(&stem), e, true);
            return None;
        }
    };
    let ex_dir = dir.join("examples").join(&stem);
    let examples = examples::read(&ex_dir, &stem, issues);
    let entry = match model::parse_entry(&text) {
        Ok(e) => e,
        Err(msg) => {
            issues.push(&rel, Some(&stem), msg, true);
            return None;
        }
    };
    let problems = model::check_entry(&stem, &entry, &examples);
    check_prefilters(&rel, &stem, &entry, issues);
    // Structural problems fail the build; coverage problems are lint-only.
    let mut hard = check_conditions(&rel, &stem, &entry, checks, issues);
    for p in problems {
        hard |= p.hard;
        issues.push(&rel, Some(&stem), p.message, p.hard);
    }
    if !cat_set.contains(entry.category.as_str()) {
        issues.push(
            &rel,
            Some(&stem),
            format!(
                "category \"{}\" is not in {} (add it there with its layer and a source)",
                entry.category,
                issues.file("categories.tsv")
            ),
            false,
        );
    }
    if hard {
        return None;
    }
    Some(LoadedEntry {
        entry,
        toml: text,
        examples,
    })
}

/// Warns of each regex signature without a required literal (it would run on every search).
fn check_prefilters(rel: &str, stem: &str, entry: &model::Entry, issues: &mut Issues) {
    for (i, s) in entry.signatures.iter().enumerate() {
        if let (None, Some(r)) = (&s.literal, &s.regex) {
            if prefilter::regex_prefilter(r).is_none() {
                issues.push(
                    rel,
                    Some(stem),
                    format!(
                        "signature #{}: the regex has no literal of 3+ characters that every match contains, so every search would compile and run it (make one word required)",
                        i + 1
                    ),
                    false,
                );
            }
        }
    }
}

/// Flags each condition whose `when` is not a doctor check (fatal); true when there was one.
fn check_conditions(
    rel: &str,
    stem: &str,
    entry: &model::Entry,
    checks: &[&str],
    issues: &mut Issues,
) -> bool {
    let mut hard = false;
    for c in entry
        .conditions
        .iter()
        .filter(|c| !checks.contains(&c.when.as_str()))
    {
        hard = true;
        issues.push(
            rel,
            Some(stem),
            format!(
                "condition when = \"{}\" is not a doctor check (kb/FORMAT.md's table lists them)",
                c.when
            ),
            true,
        );
    }
    hard
}

/// Warns of each confirm answer that rules out an id that is not a loaded entry.
fn check_rules_out(entries: &[LoadedEntry], ids: &BTreeSet<String>, issues: &mut Issues) {
    for e in entries {
        let rel = format!("entries/{}.toml", e.entry.id);
        for c in &e.entry.confirm {
            for a in &c.answers {
                for id in a.rules_out.iter().filter(|id| !ids.contains(*id)) {
                    issues.push(
                        &rel,
                        Some(&e.entry.id),
                        format!("confirm answer rules out \"{id}\", which is not an entry"),
                        false,
                    );
                }
            }
        }
    }
}
