//! The tables search scans a paste with: every needle (signature literals, regex
//! prefilter literals, code messages) with what it stands for, the signatures, and each
//! entry's ranking metadata. Built from the compiled database by [`tables`]: at build time
//! for the embedded knowledge base, which `kb/build.rs` writes out as a Rust static with
//! [`to_rust`] (so a search builds nothing of this), and in memory for `gpukb kb lint DIR`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// A string of the tables: borrowed in the embedded static, owned when built at run time.
pub type Str = Cow<'static, str>;
/// A list of the tables.
pub type List<T> = Cow<'static, [T]>;

/// One signature.
#[derive(Debug, Clone, PartialEq)]
pub struct SigRow {
    /// Index of the first signature with the same pattern (they share one compiled regex).
    pub same_as: usize,
    pub entry: Str,
    /// `literal` or `regex`.
    pub kind: Str,
    pub pattern: Str,
    pub weight: f64,
    /// Number of prefilter groups: the regex runs when a literal of each is found.
    pub groups: usize,
}

/// What finding needle `i` means.
#[derive(Debug, Clone, PartialEq)]
pub enum Pat {
    /// Signature `.0` matches (a literal, or a regex that is a plain string).
    Sig(usize),
    /// A literal of prefilter group `.1` of regex signature `.0` is present.
    Prefilter(usize, usize),
    /// The exact message of the code with this key is present.
    Message(Str),
}

/// An entry's ranking metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryMeta {
    pub id: Str,
    pub category: Str,
    pub layer: Str,
    pub title: Str,
    pub summary: Str,
    /// The doctor checks its `[[conditions]]` name.
    pub conditions: List<Str>,
    /// Frameworks and tools it is about.
    pub frameworks: List<Str>,
    /// The error-text tokens of its title, summary, keywords and signatures, sorted.
    pub words: List<Str>,
}

/// Everything search scans with.
#[derive(Debug, Clone, PartialEq)]
pub struct Tables {
    /// Lower-cased needles searched for in the lower-cased paste.
    pub needles: List<Str>,
    /// What each needle means (same index).
    pub pats: List<Pat>,
    /// Signatures ordered by entry and position.
    pub sigs: List<SigRow>,
    /// Regex signatures without a prefilter (always run).
    pub unfiltered: List<usize>,
    /// Entries ordered by id.
    pub entries: List<EntryMeta>,
}

impl Tables {
    /// The metadata of entry `id`.
    pub fn entry(&self, id: &str) -> Option<&EntryMeta> {
        self.entries
            .binary_search_by(|e| e.id.as_ref().cmp(id))
            .ok()
            .map(|i| &self.entries[i])
    }
}

/// Builds the tables from a compiled knowledge-base database.
pub fn tables(db: &rusqlite::Connection) -> rusqlite::Result<Tables> {
    let mut sigs = Vec::new();
    let mut pats = Vec::new();
    let mut needles: Vec<Str> = Vec::new();
    let mut unfiltered = Vec::new();
    let mut first_of: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<(String, i64, String, String, f64, Option<String>)> = Vec::new();
    let mut st =
        db.prepare("SELECT entry_id, idx, kind, pattern, weight, prefilter FROM signatures")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        rows.push((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ));
    }
    rows.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (entry, _, kind, pattern, weight, pre) in rows {
        let i = sigs.len();
        let same_as = *first_of.entry(pattern.clone()).or_insert(i);
        let plain = if kind == "regex" {
            plain_literal(&pattern)
        } else {
            None
        };
        let mut groups = 0;
        match (kind.as_str(), pre) {
            ("literal", Some(p)) => {
                needles.push(p.into());
                pats.push(Pat::Sig(i));
            }
            // A regex that is a plain string matches exactly where that string occurs
            // (signature regexes are case-insensitive): no regex to build.
            ("regex", Some(_)) if plain.is_some() => {
                needles.extend(plain.map(Str::from));
                pats.push(Pat::Sig(i));
            }
            (_, Some(p)) => {
                for (g, group) in p.split('\x1e').enumerate() {
                    for alt in group.split('\x1f') {
                        needles.push(alt.to_string().into());
                        pats.push(Pat::Prefilter(i, g));
                    }
                    groups = g + 1;
                }
            }
            _ => unfiltered.push(i),
        }
        sigs.push(SigRow {
            same_as,
            entry: entry.into(),
            kind: kind.into(),
            pattern: pattern.into(),
            weight,
            groups,
        });
    }
    let mut conditions: HashMap<String, Vec<Str>> = HashMap::new();
    let mut st = db.prepare("SELECT entry_id, predicate FROM conditions")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        conditions
            .entry(r.get(0)?)
            .or_default()
            .push(r.get::<_, String>(1)?.into());
    }
    let mut entries = Vec::new();
    let mut st =
        db.prepare("SELECT id, category, layer, title, summary, frameworks, json FROM entries")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        let id: String = r.get(0)?;
        let mut text = format!("{} {}", r.get::<_, String>(3)?, r.get::<_, String>(4)?);
        if let Ok(e) = serde_json::from_str::<crate::model::Entry>(&r.get::<_, String>(6)?) {
            text.push(' ');
            text.push_str(&e.keywords.join(" "));
            for s in &e.signatures {
                text.push(' ');
                text.push_str(s.pattern());
            }
        }
        let words: std::collections::BTreeSet<String> = crate::tokenize::err_tokens(&text)
            .into_iter()
            .map(|(t, _, _)| t)
            .collect();
        let frameworks: Vec<Str> = r
            .get::<_, String>(5)?
            .split_whitespace()
            .map(|f| f.to_string().into())
            .collect();
        entries.push(EntryMeta {
            conditions: conditions.remove(&id).unwrap_or_default().into(),
            id: id.into(),
            category: r.get::<_, String>(1)?.into(),
            layer: r.get::<_, String>(2)?.into(),
            title: r.get::<_, String>(3)?.into(),
            summary: r.get::<_, String>(4)?.into(),
            frameworks: frameworks.into(),
            words: words.into_iter().map(Str::from).collect::<Vec<_>>().into(),
        });
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    // Exact message strings of codes (long enough to be specific) are needles too: one per
    // distinct lower-cased message, keyed by its smallest code key.
    let mut by_message: BTreeMap<String, String> = BTreeMap::new();
    let mut st = db.prepare("SELECT message, name, key FROM codes WHERE length(message) >= 20")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        let message: String = r.get(0)?;
        let name: String = r.get(1)?;
        let key: String = r.get(2)?;
        let lower = message.to_ascii_lowercase();
        if lower == name.to_ascii_lowercase() {
            continue;
        }
        match by_message.get_mut(&lower) {
            Some(k) if *k <= key => {}
            Some(k) => *k = key,
            None => {
                by_message.insert(lower, key);
            }
        }
    }
    for (message, key) in by_message {
        needles.push(message.into());
        pats.push(Pat::Message(key.into()));
    }
    Ok(Tables {
        needles: needles.into(),
        pats: pats.into(),
        sigs: sigs.into(),
        unfiltered: unfiltered.into(),
        entries: entries.into(),
    })
}

/// The tables of the database file at `path`.
pub fn tables_in_file(path: &std::path::Path) -> rusqlite::Result<Tables> {
    tables(&rusqlite::Connection::open(path)?)
}

/// Rust source of a constant expression of type [`Tables`] equal to `t`, written with
/// borrowed strings and lists (for a `static`).
pub fn to_rust(t: &Tables) -> String {
    fn strs(v: &[Str]) -> String {
        let mut s = String::from("Cow::Borrowed(&[");
        for x in v {
            let _ = write!(s, "Cow::Borrowed({:?}),", x.as_ref());
        }
        s.push_str("])");
        s
    }
    let mut s = String::from("Tables {\n    needles: ");
    s.push_str(&strs(&t.needles));
    s.push_str(",\n    pats: Cow::Borrowed(&[");
    for p in t.pats.iter() {
        match p {
            Pat::Sig(i) => {
                let _ = write!(s, "Pat::Sig({i}),");
            }
            Pat::Prefilter(i, g) => {
                let _ = write!(s, "Pat::Prefilter({i}, {g}),");
            }
            Pat::Message(k) => {
                let _ = write!(s, "Pat::Message(Cow::Borrowed({:?})),", k.as_ref());
            }
        }
    }
    s.push_str("]),\n    sigs: Cow::Borrowed(&[\n");
    for r in t.sigs.iter() {
        let _ = writeln!(
            s,
            "        SigRow {{ same_as: {}, entry: Cow::Borrowed({:?}), kind: Cow::Borrowed({:?}), pattern: Cow::Borrowed({:?}), weight: {:?}, groups: {} }},",
            r.same_as,
            r.entry.as_ref(),
            r.kind.as_ref(),
            r.pattern.as_ref(),
            r.weight,
            r.groups
        );
    }
    let _ = write!(
        s,
        "    ]),\n    unfiltered: Cow::Borrowed(&{:?}),\n    entries: Cow::Borrowed(&[\n",
        t.unfiltered.as_ref()
    );
    for e in t.entries.iter() {
        let _ = writeln!(
            s,
            "        EntryMeta {{ id: Cow::Borrowed({:?}), category: Cow::Borrowed({:?}), layer: Cow::Borrowed({:?}), title: Cow::Borrowed({:?}), summary: Cow::Borrowed({:?}), conditions: {}, frameworks: {}, words: {} }},",
            e.id.as_ref(),
            e.category.as_ref(),
            e.layer.as_ref(),
            e.title.as_ref(),
            e.summary.as_ref(),
            strs(&e.conditions),
            strs(&e.frameworks),
            strs(&e.words)
        );
    }
    s.push_str("    ]),\n}");
    s
}

/// The lower-cased string a signature regex matches when it is a plain string
/// (an optional leading `(?i)`/`(?s)` flag group, backslash-escaped punctuation,
/// nothing else special), else `None`.
pub(crate) fn plain_literal(pattern: &str) -> Option<String> {
    let body = ["(?i)", "(?s)", "(?is)", "(?si)"]
        .iter()
        .find_map(|f| pattern.strip_prefix(f))
        .unwrap_or(pattern);
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => out.push(e),
                _ => return None,
            },
            '.' | '[' | ']' | '(' | ')' | '{' | '}' | '|' | '*' | '+' | '?' | '^' | '$' => {
                return None
            }
            c if !c.is_ascii() => return None,
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    (out.len() >= 4).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_strings_become_needles_and_real_regexes_do_not() {
        assert_eq!(
            plain_literal(r"(?i)Failed to find nvcc\."),
            Some("failed to find nvcc.".into())
        );
        assert_eq!(
            plain_literal(r"libcuda\.so\.1: cannot open shared object file"),
            Some("libcuda.so.1: cannot open shared object file".into())
        );
        assert_eq!(plain_literal(r"(?i)error \d+"), None);
        assert_eq!(plain_literal(r"sm_\d{2}"), None);
        assert_eq!(plain_literal(r"no kernel image.*device"), None);
        assert_eq!(plain_literal(r"(a|b)cdef"), None);
        assert_eq!(plain_literal(r"(?x)spaced out"), None);
        assert_eq!(plain_literal("abc"), None);
    }

    #[test]
    fn entries_are_found_by_id() {
        let e = |id: &'static str| EntryMeta {
            id: Cow::Borrowed(id),
            category: Cow::Borrowed("c"),
            layer: Cow::Borrowed("l"),
            title: Cow::Borrowed("t"),
            summary: Cow::Borrowed("s"),
            conditions: Cow::Borrowed(&[]),
            frameworks: Cow::Borrowed(&[]),
            words: Cow::Borrowed(&[]),
        };
        let t = Tables {
            needles: Cow::Borrowed(&[]),
            pats: Cow::Borrowed(&[]),
            sigs: Cow::Borrowed(&[]),
            unfiltered: Cow::Borrowed(&[]),
            entries: vec![e("a"), e("b-c"), e("d")].into(),
        };
        assert_eq!(t.entry("b-c").map(|m| m.id.as_ref()), Some("b-c"));
        assert!(t.entry("b").is_none());
    }
}
