//! The tables search scans a paste with: every needle (signature literals, regex
//! prefilter literals, code messages) with what it stands for, the signatures, and each
//! entry's ranking metadata. Built from the compiled database by [`tables`]: at build time
//! for the embedded knowledge base, which `kb/build.rs` writes out as a Rust static with
//! [`to_rust`] (so a search builds nothing of this), and in memory for `gpukb kb lint DIR`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// A list of the tables: borrowed in the embedded static, owned when built at run time.
pub type List<T> = Cow<'static, [T]>;

/// A string of the tables: `len` bytes of [`Tables::text`] from `at`; or, for a list,
/// `len` spans of [`Tables::spans`] from `at`. Offsets rather than `&str`: the static
/// then needs no relocation when the binary starts (tens of thousands of pointers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub at: u32,
    pub len: u32,
}

/// A [`Span`] (short, for the generated static).
pub const fn sp(at: u32, len: u32) -> Span {
    Span { at, len }
}

/// One signature.
#[derive(Debug, Clone, PartialEq)]
pub struct SigRow {
    /// Index of the first signature with the same pattern (they share one compiled regex).
    pub same_as: usize,
    pub entry: Span,
    /// `literal` or `regex`.
    pub kind: Span,
    pub pattern: Span,
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
    Message(Span),
}

/// An entry's ranking metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryMeta {
    pub id: Span,
    pub category: Span,
    pub layer: Span,
    pub title: Span,
    pub summary: Span,
    /// The doctor checks its `[[conditions]]` name (a list).
    pub conditions: Span,
    /// Frameworks and tools it is about (a list).
    pub frameworks: Span,
    /// The error-text tokens of its title, summary, keywords and signatures, sorted (a list).
    pub words: Span,
}

/// Everything search scans with.
#[derive(Debug, Clone, PartialEq)]
pub struct Tables {
    /// Every string of the tables, once.
    pub text: Cow<'static, str>,
    /// The items of every list.
    pub spans: List<Span>,
    /// Lower-cased needles searched for in the lower-cased paste.
    pub needles: List<Span>,
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
    /// The string `s` names.
    pub fn str(&self, s: Span) -> &str {
        self.text
            .get(s.at as usize..(s.at + s.len) as usize)
            .unwrap_or("")
    }

    /// The strings of list `l`.
    pub fn strs(&self, l: Span) -> impl Iterator<Item = &str> {
        self.spans
            .get(l.at as usize..(l.at + l.len) as usize)
            .unwrap_or(&[])
            .iter()
            .map(|s| self.str(*s))
    }

    /// Whether sorted list `l` holds `x`.
    pub fn sorted_contains(&self, l: Span, x: &str) -> bool {
        self.spans
            .get(l.at as usize..(l.at + l.len) as usize)
            .unwrap_or(&[])
            .binary_search_by(|s| self.str(*s).cmp(x))
            .is_ok()
    }

    /// The metadata of entry `id`.
    pub fn entry(&self, id: &str) -> Option<&EntryMeta> {
        self.entries
            .binary_search_by(|e| self.str(e.id).cmp(id))
            .ok()
            .map(|i| &self.entries[i])
    }
}

/// Builds [`Tables::text`] and [`Tables::spans`], storing each distinct string once.
#[derive(Default)]
struct Text {
    text: String,
    spans: Vec<Span>,
    seen: HashMap<String, Span>,
}

impl Text {
    fn put(&mut self, s: &str) -> Span {
        if let Some(sp) = self.seen.get(s) {
            return *sp;
        }
        let sp = Span {
            at: self.text.len() as u32,
            len: s.len() as u32,
        };
        self.text.push_str(s);
        self.seen.insert(s.to_string(), sp);
        sp
    }

    fn list<'a>(&mut self, items: impl IntoIterator<Item = &'a str>) -> Span {
        let items: Vec<Span> = items.into_iter().map(|s| self.put(s)).collect();
        let at = self.spans.len() as u32;
        self.spans.extend(&items);
        Span {
            at,
            len: items.len() as u32,
        }
    }
}

/// Builds the tables from a compiled knowledge-base database.
pub fn tables(db: &rusqlite::Connection) -> rusqlite::Result<Tables> {
    let mut tx = Text::default();
    let mut scan = Scan::default();
    for row in signature_rows(db)? {
        scan.add_signature(&mut tx, row);
    }
    let entries = entry_metas(db, &mut tx)?;
    for (message, key) in code_messages(db)? {
        scan.needles.push(tx.put(&message));
        scan.pats.push(Pat::Message(tx.put(&key)));
    }
    Ok(Tables {
        text: tx.text.into(),
        spans: tx.spans.into(),
        needles: scan.needles.into(),
        pats: scan.pats.into(),
        sigs: scan.sigs.into(),
        unfiltered: scan.unfiltered.into(),
        entries: entries.into(),
    })
}

/// One row of the `signatures` table.
struct SignatureRow {
    entry: String,
    idx: i64,
    kind: String,
    pattern: String,
    weight: f64,
    prefilter: Option<String>,
}

/// The signatures of the database, ordered by entry and position.
fn signature_rows(db: &rusqlite::Connection) -> rusqlite::Result<Vec<SignatureRow>> {
    let mut rows = Vec::new();
    let mut st =
        db.prepare("SELECT entry_id, idx, kind, pattern, weight, prefilter FROM signatures")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        rows.push(SignatureRow {
            entry: r.get(0)?,
            idx: r.get(1)?,
            kind: r.get(2)?,
            pattern: r.get(3)?,
            weight: r.get(4)?,
            prefilter: r.get(5)?,
        });
    }
    rows.sort_by(|a, b| (&a.entry, a.idx).cmp(&(&b.entry, b.idx)));
    Ok(rows)
}

/// The signatures and needles of the tables as they are built, in scan order.
#[derive(Default)]
struct Scan {
    sigs: Vec<SigRow>,
    pats: Vec<Pat>,
    needles: Vec<Span>,
    unfiltered: Vec<usize>,
    /// Pattern -> index of the first signature with it.
    first_of: HashMap<String, usize>,
}

impl Scan {
    /// Adds one signature with its needles: its literal, the plain string of a regex, or
    /// each literal of each prefilter group; a regex without a prefilter always runs.
    fn add_signature(&mut self, tx: &mut Text, row: SignatureRow) {
        let SignatureRow {
            entry,
            kind,
            pattern,
            weight,
            prefilter,
            ..
        } = row;
        let i = self.sigs.len();
        let same_as = *self.first_of.entry(pattern.clone()).or_insert(i);
        let plain = if kind == "regex" {
            plain_literal(&pattern)
        } else {
            None
        };
        let mut groups = 0;
        match (kind.as_str(), prefilter) {
            ("literal", Some(p)) => {
                self.needles.push(tx.put(&p));
                self.pats.push(Pat::Sig(i));
            }
            // A regex that is a plain string matches exactly where that string occurs
            // (signature regexes are case-insensitive): no regex to build.
            ("regex", Some(_)) if plain.is_some() => {
                self.needles.extend(plain.map(|p| tx.put(&p)));
                self.pats.push(Pat::Sig(i));
            }
            (_, Some(p)) => {
                for (g, group) in p.split('\x1e').enumerate() {
                    for alt in group.split('\x1f') {
                        self.needles.push(tx.put(alt));
                        self.pats.push(Pat::Prefilter(i, g));
                    }
                    groups = g + 1;
                }
            }
            _ => self.unfiltered.push(i),
        }
        self.sigs.push(SigRow {
            same_as,
            entry: tx.put(&entry),
            kind: tx.put(&kind),
            pattern: tx.put(&pattern),
            weight,
            groups,
        });
    }
}

/// Entry id -> the doctor checks its `[[conditions]]` name.
fn conditions_by_entry(
    db: &rusqlite::Connection,
) -> rusqlite::Result<HashMap<String, Vec<String>>> {
    let mut conditions: HashMap<String, Vec<String>> = HashMap::new();
    let mut st = db.prepare("SELECT entry_id, predicate FROM conditions")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        conditions.entry(r.get(0)?).or_default().push(r.get(1)?);
    }
    Ok(conditions)
}

/// The ranking metadata of every entry, ordered by id.
fn entry_metas(db: &rusqlite::Connection, tx: &mut Text) -> rusqlite::Result<Vec<EntryMeta>> {
    let mut conditions = conditions_by_entry(db)?;
    let mut entries = Vec::new();
    let mut st =
        db.prepare("SELECT id, category, layer, title, summary, frameworks, json FROM entries")?;
    let mut q = st.query([])?;
    while let Some(r) = q.next()? {
        let id: String = r.get(0)?;
        let title: String = r.get(3)?;
        let summary: String = r.get(4)?;
        let words = entry_words(&title, &summary, &r.get::<_, String>(6)?);
        let frameworks: String = r.get(5)?;
        let conds = conditions.remove(&id).unwrap_or_default();
        entries.push(EntryMeta {
            id: tx.put(&id),
            category: tx.put(&r.get::<_, String>(1)?),
            layer: tx.put(&r.get::<_, String>(2)?),
            title: tx.put(&title),
            summary: tx.put(&summary),
            conditions: tx.list(conds.iter().map(String::as_str)),
            frameworks: tx.list(frameworks.split_whitespace()),
            words: tx.list(words.iter().map(String::as_str)),
        });
    }
    entries.sort_by(|a, b| {
        tx.text[a.id.at as usize..(a.id.at + a.id.len) as usize]
            .cmp(&tx.text[b.id.at as usize..(b.id.at + b.id.len) as usize])
    });
    Ok(entries)
}

/// The error-text tokens of an entry's title, summary, keywords and signatures, sorted.
fn entry_words(title: &str, summary: &str, json: &str) -> std::collections::BTreeSet<String> {
    let mut text = format!("{title} {summary}");
    if let Ok(e) = serde_json::from_str::<crate::model::Entry>(json) {
        text.push(' ');
        text.push_str(&e.keywords.join(" "));
        for s in &e.signatures {
            text.push(' ');
            text.push_str(s.pattern());
        }
    }
    crate::tokenize::err_tokens(&text)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect()
}

/// Exact message strings of codes (long enough to be specific), which are needles too:
/// each distinct lower-cased message with its smallest code key.
fn code_messages(db: &rusqlite::Connection) -> rusqlite::Result<BTreeMap<String, String>> {
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
    Ok(by_message)
}

/// The tables of the database file at `path`.
pub fn tables_in_file(path: &std::path::Path) -> rusqlite::Result<Tables> {
    tables(&rusqlite::Connection::open(path)?)
}

/// Rust source of a constant expression of type [`Tables`] equal to `t` (for a `static`;
/// it uses [`sp`]).
pub fn to_rust(t: &Tables) -> String {
    fn spans(v: &[Span]) -> String {
        let mut s = String::from("Cow::Borrowed(&[");
        for x in v {
            let _ = write!(s, "sp({},{}),", x.at, x.len);
        }
        s.push_str("])");
        s
    }
    let sp = |x: Span| format!("sp({},{})", x.at, x.len);
    let mut s = format!(
        "Tables {{\n    text: Cow::Borrowed({:?}),\n",
        t.text.as_ref()
    );
    let _ = writeln!(s, "    spans: {},", spans(&t.spans));
    let _ = writeln!(s, "    needles: {},", spans(&t.needles));
    s.push_str("    pats: Cow::Borrowed(&[");
    for p in t.pats.iter() {
        let _ = match p {
            Pat::Sig(i) => write!(s, "Pat::Sig({i}),"),
            Pat::Prefilter(i, g) => write!(s, "Pat::Prefilter({i},{g}),"),
            Pat::Message(k) => write!(s, "Pat::Message({}),", sp(*k)),
        };
    }
    s.push_str("]),\n    sigs: Cow::Borrowed(&[\n");
    for r in t.sigs.iter() {
        let _ = writeln!(
            s,
            "        SigRow {{ same_as: {}, entry: {}, kind: {}, pattern: {}, weight: {:?}, groups: {} }},",
            r.same_as,
            sp(r.entry),
            sp(r.kind),
            sp(r.pattern),
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
            "        EntryMeta {{ id: {}, category: {}, layer: {}, title: {}, summary: {}, conditions: {}, frameworks: {}, words: {} }},",
            sp(e.id),
            sp(e.category),
            sp(e.layer),
            sp(e.title),
            sp(e.summary),
            sp(e.conditions),
            sp(e.frameworks),
            sp(e.words)
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
    fn strings_and_lists_are_stored_once_and_found_again() {
        let mut tx = Text::default();
        let a = tx.put("b-c");
        assert_eq!(tx.put("b-c"), a);
        let ids = ["a", "b-c", "d"];
        let words = tx.list(["x", "y", "z"]);
        let e = |id: Span| EntryMeta {
            id,
            category: id,
            layer: id,
            title: id,
            summary: id,
            conditions: sp(0, 0),
            frameworks: sp(0, 0),
            words,
        };
        let entries: Vec<EntryMeta> = ids.iter().map(|i| e(tx.put(i))).collect();
        let t = Tables {
            text: tx.text.into(),
            spans: tx.spans.into(),
            needles: Cow::Borrowed(&[]),
            pats: Cow::Borrowed(&[]),
            sigs: Cow::Borrowed(&[]),
            unfiltered: Cow::Borrowed(&[]),
            entries: entries.into(),
        };
        let found = t.entry("b-c").expect("b-c");
        assert_eq!(t.str(found.id), "b-c");
        assert!(t.entry("b").is_none());
        assert_eq!(t.strs(found.words).collect::<Vec<_>>(), ["x", "y", "z"]);
        assert!(t.sorted_contains(found.words, "y") && !t.sorted_contains(found.words, "w"));
    }
}
