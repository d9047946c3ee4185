//! Compiles the knowledge base at build time: reads `kb/entries/*.toml`, `kb/examples/`,
//! `kb/tables/*.csv` and `kb/categories.tsv`, validates them with the same checks as
//! `gpukb kb lint` (schema errors fail the build with a precise message), and writes into
//! `OUT_DIR` a SQLite database and a one-segment tantivy index, both embedded in the binary.
//!
//! Set `GPUKB_KB_LENIENT=1` to turn schema errors into warnings (the bad entry is left out
//! and reported by `gpukb kb lint`) while entries are being written.
// Build scripts read the repository's own data files, not machine state.
#![allow(clippy::disallowed_methods)]

#[path = "src/model.rs"]
#[allow(dead_code)]
mod model;
#[path = "src/tokenize.rs"]
#[allow(dead_code)]
mod tokenize;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};
use tantivy::{doc, Index};

type BoxErr = Box<dyn std::error::Error>;
/// A parsed entry, its TOML text and its examples (file name, text).
type Loaded = (model::Entry, String, Vec<(String, String)>);

/// A parsed CSV (header + rows) with a tiny RFC 4180 reader.
fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), BoxErr> {
    let text = std::fs::read_to_string(path)?;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else {
            match c {
                '"' => quoted = true,
                ',' => row.push(std::mem::take(&mut field)),
                '\r' => {}
                '\n' => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                _ => field.push(c),
            }
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(format!("{}: empty CSV", path.display()).into());
    }
    let header = rows.remove(0);
    for (i, r) in rows.iter().enumerate() {
        if r.len() != header.len() {
            return Err(format!(
                "{}: row {} has {} fields, the header has {}",
                path.display(),
                i + 2,
                r.len(),
                header.len()
            )
            .into());
        }
    }
    Ok((header, rows))
}

fn col(header: &[String], name: &str, path: &Path) -> Result<usize, BoxErr> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| format!("{}: no `{name}` column", path.display()).into())
}

/// Maps a `library` column value to the code-key prefix and the generated-id prefix.
fn library_prefix(lib: &str) -> Option<(&'static str, &'static str)> {
    Some(if lib.starts_with("CUresult") {
        ("cuda", "cuda")
    } else if lib.starts_with("cudaError_t") {
        ("cudart", "cudart")
    } else if lib.starts_with("nvmlReturn_t") {
        ("nvml", "nvml")
    } else if lib.starts_with("cublasStatus_t") {
        ("cublas", "cublas")
    } else if lib.starts_with("cudnnStatus_t (cuDNN <=8") {
        ("cudnn", "cudnn8")
    } else if lib.starts_with("cudnnStatus_t") {
        ("cudnn", "cudnn")
    } else if lib.starts_with("ncclResult_t") {
        ("nccl", "nccl")
    } else {
        return None;
    })
}

struct CodeRow {
    id: String,
    library: String,
    prefix: String,
    key: String,
    number: i64,
    name: String,
    message: String,
    description: String,
    source: String,
    verified: String,
}

/// Literals of which every match of the regex must contain at least one (lowercased), if
/// such a set of reasonably specific literals exists; joined with `\x1f` in the database.
fn regex_prefilter(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Hir, HirKind};
    fn quality(set: &[String]) -> usize {
        set.iter().map(|s| s.trim().len()).min().unwrap_or(0)
    }
    fn better(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if quality(&b) > quality(&a) { b } else { a }),
            (a, b) => a.or(b),
        }
    }
    fn lit(h: &Hir) -> Option<String> {
        match h.kind() {
            HirKind::Literal(l) => Some(String::from_utf8_lossy(&l.0).to_lowercase()),
            _ => None,
        }
    }
    // A set of literals, one of which appears in every match of `h`.
    fn req(h: &Hir) -> Option<Vec<String>> {
        match h.kind() {
            HirKind::Literal(_) => lit(h).map(|l| vec![l]),
            HirKind::Capture(c) => req(&c.sub),
            HirKind::Repetition(r) if r.min >= 1 => req(&r.sub),
            HirKind::Alternation(alts) => {
                let mut all = Vec::new();
                for a in alts {
                    all.extend(req(a)?);
                }
                (all.len() <= 16).then_some(all)
            }
            HirKind::Concat(children) => {
                let mut best: Option<Vec<String>> = None;
                let mut run = String::new();
                for c in children {
                    if let Some(l) = lit(c) {
                        run.push_str(&l);
                        continue;
                    }
                    if !run.is_empty() {
                        best = better(best, Some(vec![std::mem::take(&mut run)]));
                    }
                    best = better(best, req(c));
                }
                if !run.is_empty() {
                    best = better(best, Some(vec![run]));
                }
                best
            }
            _ => None,
        }
    }
    // Search matches prefilter literals against the lower-cased text, so a leading
    // case-insensitive flag is dropped here: under it every letter is a class, not a literal.
    let p = without_leading_case_flag(pattern);
    let hir = regex_syntax::ParserBuilder::new().build().parse(&p).ok()?;
    let set = req(&hir)?;
    (quality(&set) >= 3).then(|| set.join("\x1f"))
}

/// `pattern` without the `i` of a leading flag group: `(?is)x` → `(?s)x`, `(?i)x` → `x`.
fn without_leading_case_flag(pattern: &str) -> String {
    if let Some(rest) = pattern.strip_prefix("(?") {
        if let Some(end) = rest.find(')') {
            let flags = &rest[..end];
            if flags.contains('i') && flags.chars().all(|c| c.is_ascii_alphabetic()) {
                let kept: String = flags.chars().filter(|c| *c != 'i').collect();
                let tail = &rest[end + 1..];
                return if kept.is_empty() {
                    tail.to_string()
                } else {
                    format!("(?{kept}){tail}")
                };
            }
        }
    }
    pattern.to_string()
}

/// The names of a `same_as` field: comma-separated snake_case categories, none empty.
fn same_as_list(field: &str) -> Result<Vec<String>, String> {
    let field = field.trim();
    if field.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for name in field.split(',').map(str::trim) {
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(format!(
                "\"{name}\" is not a category name (snake_case, comma-separated)"
            ));
        }
        out.push(name.to_string());
    }
    Ok(out)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("\ngpukb-kb build: {e}\n");
        std::process::exit(1);
    }
}

fn run() -> Result<(), BoxErr> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let lenient = std::env::var("GPUKB_KB_LENIENT").is_ok_and(|v| v == "1");
    for p in [
        "entries",
        "examples",
        "tables",
        "categories.tsv",
        "src/model.rs",
        "src/tokenize.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=GPUKB_KB_LENIENT");

    // --- categories
    let cat_path = root.join("categories.tsv");
    let cat_text = std::fs::read_to_string(&cat_path)?;
    let mut categories: Vec<[String; 5]> = Vec::new();
    for (i, line) in cat_text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        // 4 fields, or 5 with `same_as` (comma-separated eval categories naming the same
        // cause; may be empty).
        if !(4..=5).contains(&f.len()) || f[..4].iter().any(|x| x.trim().is_empty()) {
            return Err(format!(
                "{}:{}: expected 4 non-empty tab-separated fields (category, layer, meaning, source) and an optional 5th (same_as)",
                cat_path.display(),
                i + 1
            )
            .into());
        }
        let same_as = same_as_list(f.get(4).copied().unwrap_or(""))
            .map_err(|m| format!("{}:{}: same_as: {m}", cat_path.display(), i + 1))?;
        categories.push([
            f[0].into(),
            f[1].into(),
            f[2].into(),
            f[3].into(),
            same_as.join(","),
        ]);
    }
    {
        let mut seen = BTreeSet::new();
        for c in &categories {
            if !seen.insert(c[0].as_str()) {
                return Err(format!(
                    "{}: category \"{}\" is listed twice",
                    cat_path.display(),
                    c[0]
                )
                .into());
            }
        }
    }
    let cat_set: BTreeSet<&str> = categories.iter().map(|c| c[0].as_str()).collect();

    // --- code tables
    let errs_path = root.join("tables/cuda_errors.csv");
    let (h, rows) = read_csv(&errs_path)?;
    let [c_lib, c_code, c_name, c_msg, c_desc, c_src, c_ver] = [
        "library",
        "code",
        "enum_name",
        "message_string",
        "description",
        "source",
        "verified",
    ]
    .map(|n| col(&h, n, &errs_path));
    let (c_lib, c_code, c_name, c_msg, c_desc, c_src, c_ver) =
        (c_lib?, c_code?, c_name?, c_msg?, c_desc?, c_src?, c_ver?);
    let mut codes: Vec<CodeRow> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let line = i + 2;
        let (prefix, idp) = library_prefix(&r[c_lib]).ok_or_else(|| {
            format!(
                "{}:{line}: unknown library \"{}\"",
                errs_path.display(),
                r[c_lib]
            )
        })?;
        let number: i64 = r[c_code].trim().parse().map_err(|_| {
            format!(
                "{}:{line}: code \"{}\" is not a number",
                errs_path.display(),
                r[c_code]
            )
        })?;
        if r[c_src].trim().is_empty() {
            return Err(format!("{}:{line}: empty source", errs_path.display()).into());
        }
        codes.push(CodeRow {
            id: format!("{idp}-{number}"),
            library: r[c_lib].clone(),
            prefix: prefix.into(),
            key: format!("{prefix}:{number}"),
            number,
            name: r[c_name].trim().into(),
            message: r[c_msg].trim().into(),
            description: r[c_desc].trim().into(),
            source: r[c_src].trim().into(),
            verified: r[c_ver].trim().into(),
        });
    }
    let xid_path = root.join("tables/xid.csv");
    let (xh, xrows) = read_csv(&xid_path)?;
    let xc = |n: &str| col(&xh, n, &xid_path);
    let (x_num, x_mn, x_desc, x_leg, x_imm, x_inv, x_trig, x_src, x_ver) = (
        xc("xid")?,
        xc("mnemonic")?,
        xc("description")?,
        xc("legacy_description_pre_ampere_doc")?,
        xc("immediate_action")?,
        xc("investigatory_action")?,
        xc("trigger_conditions_summary")?,
        xc("source")?,
        xc("verified")?,
    );
    for (i, r) in xrows.iter().enumerate() {
        let line = i + 2;
        let number: i64 = r[x_num].trim().parse().map_err(|_| {
            format!(
                "{}:{line}: xid \"{}\" is not a number",
                xid_path.display(),
                r[x_num]
            )
        })?;
        if r[x_src].trim().is_empty() {
            return Err(format!("{}:{line}: empty source", xid_path.display()).into());
        }
        let mut desc = r[x_desc].trim().to_string();
        if !r[x_leg].trim().is_empty() && r[x_leg].trim() != desc {
            let _ = write!(desc, " (older documentation: {})", r[x_leg].trim());
        }
        let mut more = Vec::new();
        for (label, c) in [
            ("Immediate action", x_imm),
            ("Investigation", x_inv),
            ("Triggers", x_trig),
        ] {
            if !r[c].trim().is_empty() {
                more.push(format!("{label}: {}", r[c].trim()));
            }
        }
        codes.push(CodeRow {
            id: format!("xid-{number}"),
            library: "Xid (NVIDIA driver, kernel log)".into(),
            prefix: "xid".into(),
            key: format!("xid:{number}"),
            number,
            name: r[x_mn].trim().into(),
            message: desc,
            description: more.join(". "),
            source: r[x_src].trim().into(),
            verified: r[x_ver].trim().into(),
        });
    }
    let mut code_keys: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in &codes {
        code_keys.insert(c.key.clone());
        names
            .entry(c.name.to_lowercase())
            .or_default()
            .push(c.key.clone());
    }

    // --- entries and examples
    let mut files: Vec<PathBuf> = match std::fs::read_dir(root.join("entries")) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let mut entries: Vec<Loaded> = Vec::new();
    let mut issues: Vec<(String, String)> = Vec::new();
    let mut fatal: Vec<String> = Vec::new();
    for f in &files {
        let rel = format!(
            "kb/entries/{}",
            f.file_name().unwrap_or_default().to_string_lossy()
        );
        let stem = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{rel}: {e}"))?;
        let examples = read_examples(&root.join("examples").join(&stem))?;
        for (name, bad) in example_source_problems(&root.join("examples").join(&stem))? {
            issues.push((
                format!("kb/examples/{stem}/{name}"),
                format!("\"# source: {bad}\" is not one http(s) URL"),
            ));
        }
        let entry = match model::parse_entry(&text) {
            Ok(e) => e,
            Err(msg) => {
                fatal.push(format!("{rel}: {msg}"));
                issues.push((rel, msg));
                continue;
            }
        };
        let problems = model::check_entry(&stem, &entry, &examples);
        for (i, s) in entry.signatures.iter().enumerate() {
            if let (None, Some(r)) = (&s.literal, &s.regex) {
                if regex_prefilter(r).is_none() {
                    issues.push((
                        rel.clone(),
                        format!(
                            "signature #{}: the regex has no literal of 3+ characters that every match contains, so every search would compile and run it (make one word required)",
                            i + 1
                        ),
                    ));
                }
            }
        }
        // Structural problems fail the build; coverage problems are lint-only.
        let (hard, soft): (Vec<model::Problem>, Vec<model::Problem>) =
            problems.into_iter().partition(|p| p.hard);
        let hard: Vec<String> = hard.into_iter().map(|p| p.message).collect();
        for p in soft {
            issues.push((rel.clone(), p.message));
        }
        if !cat_set.contains(entry.category.as_str()) {
            issues.push((
                rel.clone(),
                format!(
                    "category \"{}\" is not in kb/categories.tsv (add it there with its layer and a source)",
                    entry.category
                ),
            ));
        }
        if !hard.is_empty() {
            for p in &hard {
                fatal.push(format!("{rel}: {p}"));
                issues.push((rel.clone(), p.clone()));
            }
            continue;
        }
        entries.push((entry, text, examples));
    }
    let mut ids = BTreeSet::new();
    for (e, _, _) in &entries {
        if !ids.insert(e.id.clone()) {
            fatal.push(format!("duplicate id {}", e.id));
        }
    }
    for (e, _, _) in &entries {
        for c in &e.confirm {
            for a in &c.answers {
                for id in a.rules_out.iter().filter(|id| !ids.contains(*id)) {
                    issues.push((
                        format!("kb/entries/{}.toml", e.id),
                        format!("confirm answer rules out \"{id}\", which is not an entry"),
                    ));
                }
            }
        }
    }
    if !fatal.is_empty() {
        if lenient {
            for f in &fatal {
                println!("cargo:warning=gpukb kb (left out): {f}");
            }
        } else {
            return Err(format!(
                "invalid knowledge-base data ({} problem(s); set GPUKB_KB_LENIENT=1 to build without the bad entries):\n  {}",
                fatal.len(),
                fatal.join("\n  ")
            )
            .into());
        }
    }

    // --- resolve entry codes -> keys
    let mut links: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut entry_keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (e, _, _) in &entries {
        let rel = format!("kb/entries/{}.toml", e.id);
        for c in &e.codes {
            let keys: Vec<String> = if c.contains(':') {
                let k = c.trim().to_lowercase();
                if code_keys.contains(&k) {
                    vec![k]
                } else {
                    issues.push((rel.clone(), format!("code \"{c}\" is not in kb/tables")));
                    vec![]
                }
            } else if let Some(ks) = names.get(&c.trim().to_lowercase()) {
                ks.clone()
            } else {
                issues.push((
                    rel.clone(),
                    format!("code name \"{c}\" is not in kb/tables"),
                ));
                vec![]
            };
            for k in keys {
                let v = links.entry(k.clone()).or_default();
                if !v.contains(&e.id) {
                    v.push(e.id.clone());
                }
                let ek = entry_keys.entry(e.id.clone()).or_default();
                if !ek.contains(&k) {
                    ek.push(k);
                }
            }
        }
    }

    write_sqlite(
        &out,
        &categories,
        &codes,
        &entries,
        &links,
        &entry_keys,
        &issues,
        files.len(),
    )?;
    write_index(&out, &codes, &entries, &links)?;
    Ok(())
}

fn read_examples(dir: &Path) -> Result<Vec<(String, String)>, BoxErr> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let bytes = std::fs::read(&p)?;
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        out.push((name, strip_source_lines(&text).to_string()));
    }
    Ok(out)
}

/// (file name, bad value) for every malformed `# source:` line of the examples in `dir`.
fn example_source_problems(dir: &Path) -> Result<Vec<(String, String)>, BoxErr> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for p in rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
    {
        let text = String::from_utf8_lossy(&std::fs::read(&p)?).into_owned();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        out.extend(
            bad_source_lines(&text)
                .into_iter()
                .map(|b| (name.clone(), b)),
        );
    }
    out.sort();
    Ok(out)
}

/// An example without its leading `# source: <URL>` lines (kb/FORMAT.md): the URL says
/// where the example came from and is not part of the error text that search sees.
fn strip_source_lines(text: &str) -> &str {
    let mut rest = text;
    while let Some(line) = rest.lines().next() {
        if !line.starts_with("# source:") {
            break;
        }
        rest = rest[line.len()..].trim_start_matches(['\r', '\n']);
    }
    rest
}

/// Leading `# source:` lines of an example whose value is not an http(s) URL.
fn bad_source_lines(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| l.starts_with("# source:"))
        .filter_map(|l| {
            let v = l["# source:".len()..].trim();
            (!(v.starts_with("https://") || v.starts_with("http://")) || v.contains(' '))
                .then(|| v.to_string())
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn write_sqlite(
    out: &Path,
    categories: &[[String; 5]],
    codes: &[CodeRow],
    entries: &[Loaded],
    links: &BTreeMap<String, Vec<String>>,
    entry_keys: &BTreeMap<String, Vec<String>>,
    issues: &[(String, String)],
    entries_on_disk: usize,
) -> Result<(), BoxErr> {
    let path = out.join("kb.sqlite");
    let _ = std::fs::remove_file(&path);
    let mut db = rusqlite::Connection::open(&path)?;
    db.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
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
        CREATE TABLE build_issues(file TEXT NOT NULL, message TEXT NOT NULL);",
    )?;
    let tx = db.transaction()?;
    for c in categories {
        tx.execute(
            "INSERT INTO categories VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![c[0], c[1], c[2], c[3], c[4]],
        )?;
    }
    for c in codes {
        let linked = links.get(&c.key).map(|v| v.join(",")).unwrap_or_default();
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
    for (e, toml_text, examples) in entries {
        tx.execute(
            "INSERT INTO entries VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            rusqlite::params![
                e.id,
                e.category,
                e.layer,
                e.title,
                e.summary,
                model::frameworks_in(&format!("{} {}", e.title, e.keywords.join(" "))).join(" "),
                serde_json::to_string(e)?,
                toml_text
            ],
        )?;
        for (i, s) in e.signatures.iter().enumerate() {
            let (kind, pre) = match (&s.literal, &s.regex) {
                (Some(l), _) => ("literal", Some(l.to_lowercase())),
                (None, Some(r)) => ("regex", regex_prefilter(r)),
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
        for k in entry_keys.get(&e.id).into_iter().flatten() {
            tx.execute(
                "INSERT INTO entry_codes VALUES (?1, ?2)",
                rusqlite::params![e.id, k],
            )?;
        }
        for (name, text) in examples {
            tx.execute(
                "INSERT INTO examples VALUES (?1, ?2, ?3)",
                rusqlite::params![e.id, name, text],
            )?;
        }
    }
    for (f, m) in issues {
        tx.execute(
            "INSERT INTO build_issues VALUES (?1, ?2)",
            rusqlite::params![f, m],
        )?;
    }
    tx.execute(
        "INSERT INTO meta VALUES ('entries_on_disk', ?1)",
        rusqlite::params![entries_on_disk.to_string()],
    )?;
    tx.commit()?;
    db.execute_batch("VACUUM;")?;
    Ok(())
}

fn write_index(
    out: &Path,
    codes: &[CodeRow],
    entries: &[Loaded],
    links: &BTreeMap<String, Vec<String>>,
) -> Result<(), BoxErr> {
    let dir = out.join("idx");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
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
    let index = Index::create_in_dir(&dir, schema)?;
    tokenize::register(&index);
    let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 50_000_000)?;
    for (e, _, examples) in entries {
        let mut body = format!("{}\n{}\n", e.summary, e.keywords.join(" "));
        for s in &e.signatures {
            if let Some(l) = &s.literal {
                body.push_str(l);
                body.push('\n');
            }
        }
        body.push_str(&e.codes.join(" "));
        let ex: String = examples
            .iter()
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let title = format!("{} {}", e.title, e.keywords.join(" "));
        w.add_document(doc!(id => e.id.clone(), kind => "curated",
            title_w => title.clone(), title_s => title,
            body_w => body.clone(), body_s => body, ex_w => ex.clone(), ex_s => ex))?;
    }
    for c in codes {
        let title = format!("{} {} {}", c.name, c.message, c.key);
        let body = format!(
            "{} {}",
            c.description,
            links.get(&c.key).map(|v| v.join(" ")).unwrap_or_default()
        );
        w.add_document(doc!(id => c.id.clone(), kind => "code",
            title_w => title.clone(), title_s => title, body_w => body.clone(), body_s => body))?;
    }
    w.commit()?;
    w.wait_merging_threads()?;
    // Embed every index file except lock files.
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    names.sort();
    let mut rs = String::from(
        "/// Files of the embedded tantivy index.\npub static INDEX_FILES: &[(&str, &[u8])] = &[\n",
    );
    for n in names {
        let _ = writeln!(
            rs,
            "    ({n:?}, include_bytes!({:?})),",
            dir.join(&n).display().to_string()
        );
    }
    rs.push_str("];\n");
    std::fs::write(out.join("embedded_index.rs"), rs)?;
    Ok(())
}
