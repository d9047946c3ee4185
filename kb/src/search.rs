//! Search: normalises a paste, extracts signals, matches entry signatures (strong), code
//! names/numbers/messages (strong, through the code tables' links), and BM25 over the
//! tantivy index (weak), applies rules over machine facts, and returns ranked hits with a
//! confidence and the reasons each matched.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use aho_corasick::AhoCorasick;
use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query as TQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{TantivyDocument, Term};

use crate::diagnose::{CheckOutcome, Diagnosis};
use crate::model::{Confirm, Entry, Fix, Source};
use crate::{normalize, signals, tokenize, Kb, KbError, Signals};

/// Inputs up to this many bytes are scanned needle by needle (no automaton to build).
const SMALL_TEXT: usize = 64 * 1024;

/// Most unique query tokens sent to BM25.
const MAX_TERMS: usize = 1200;

/// An analysed paste.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Query {
    /// The normalised text (capped).
    pub normalized: String,
    /// Signals found in it.
    pub signals: Signals,
    /// Whether the input looked like binary data.
    pub binary: bool,
}

/// A rule verdict on a hit.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RuleVerdict {
    /// Predicate name.
    pub predicate: String,
    /// "confirmed" or "ruled_out".
    pub outcome: String,
    /// The fact sentence.
    pub because: String,
}

/// One ranked diagnosis.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Hit {
    /// Entry id (curated) or generated code id (`cuda-209`, `xid-79`).
    pub id: String,
    /// "curated" or "code".
    pub kind: String,
    /// Category (`code` for generated code entries without a curated link).
    pub category: String,
    /// Layer.
    pub layer: String,
    /// Title.
    pub title: String,
    /// What is wrong and why.
    pub summary: String,
    /// Ranking score (unbounded, higher is better).
    pub score: f64,
    /// Confidence in 0..1.
    pub confidence: f64,
    /// Why it matched, human readable.
    pub matched: Vec<String>,
    /// Fixes.
    pub fixes: Vec<Fix>,
    /// How to confirm.
    pub confirm: Vec<Confirm>,
    /// Sources.
    pub sources: Vec<Source>,
    /// Rule verdicts from machine facts.
    pub verdicts: Vec<RuleVerdict>,
    /// Predicates this entry's conditions name (facts decide them).
    pub conditions: Vec<String>,
}

struct SigRow {
    /// Index of the row holding the compiled regex (identical patterns share one).
    same_as: usize,
    entry: String,
    kind: String,
    pattern: String,
    weight: f64,
    regex: OnceCell<Option<regex::bytes::Regex>>,
}

enum Pat {
    Sig(usize),
    Prefilter(usize),
    Message(String),
}

struct EntryMeta {
    category: String,
    layer: String,
    title: String,
    summary: String,
    conditions: Vec<String>,
    frameworks: Vec<String>,
}

struct CodeMeta {
    id: String,
    library: String,
    name: String,
    message: String,
    source: String,
    linked: Vec<String>,
}

/// Everything search needs in memory, built on first use.
pub struct Matcher {
    /// Built only for large inputs; small ones scan each needle with memmem.
    ac: OnceCell<Option<AhoCorasick>>,
    needles: Vec<String>,
    pats: Vec<Pat>,
    sigs: Vec<SigRow>,
    unfiltered: Vec<usize>,
    entries: HashMap<String, EntryMeta>,
}

impl Matcher {
    fn load(kb: &Kb) -> Result<Matcher, KbError> {
        let db = &kb.db;
        let mut sigs = Vec::new();
        let mut pats = Vec::new();
        let mut needles: Vec<String> = Vec::new();
        let mut unfiltered = Vec::new();
        let mut first_of: HashMap<String, usize> = HashMap::new();
        {
            let mut st = db.prepare(
                "SELECT entry_id, kind, pattern, weight, prefilter FROM signatures ORDER BY entry_id, idx",
            )?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let i = sigs.len();
                let kind: String = r.get(1)?;
                let pre: Option<String> = r.get(4)?;
                let pattern: String = r.get(2)?;
                let same_as = *first_of.entry(pattern.clone()).or_insert(i);
                sigs.push(SigRow {
                    same_as,
                    entry: r.get(0)?,
                    kind: kind.clone(),
                    pattern,
                    weight: r.get(3)?,
                    regex: OnceCell::new(),
                });
                match (kind.as_str(), pre) {
                    ("literal", Some(p)) => {
                        needles.push(p);
                        pats.push(Pat::Sig(i));
                    }
                    (_, Some(p)) => {
                        for alt in p.split('\x1f') {
                            needles.push(alt.to_string());
                            pats.push(Pat::Prefilter(i));
                        }
                    }
                    _ => unfiltered.push(i),
                }
            }
        }
        let mut entries = HashMap::new();
        {
            let mut st =
                db.prepare("SELECT id, category, layer, title, summary, frameworks FROM entries")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                entries.insert(
                    r.get::<_, String>(0)?,
                    EntryMeta {
                        category: r.get(1)?,
                        layer: r.get(2)?,
                        title: r.get(3)?,
                        summary: r.get(4)?,
                        conditions: Vec::new(),
                        frameworks: r
                            .get::<_, String>(5)?
                            .split_whitespace()
                            .map(String::from)
                            .collect(),
                    },
                );
            }
            let mut st = db.prepare("SELECT entry_id, predicate FROM conditions")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let id: String = r.get(0)?;
                if let Some(e) = entries.get_mut(&id) {
                    e.conditions.push(r.get(1)?);
                }
            }
        }
        {
            // Exact message strings of codes (long enough to be specific) are needles too.
            let mut st = db.prepare(
                "SELECT lower(message), min(key) FROM codes WHERE length(message) >= 20 \
                 AND lower(message) != lower(name) GROUP BY lower(message)",
            )?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                needles.push(r.get(0)?);
                pats.push(Pat::Message(r.get(1)?));
            }
        }
        Ok(Matcher {
            ac: OnceCell::new(),
            needles,
            pats,
            sigs,
            unfiltered,
            entries,
        })
    }
}

#[derive(Default)]
struct Cand {
    sig: Vec<f64>,
    code: Vec<f64>,
    bm25: f64,
    matched: Vec<String>,
    code_key: Option<String>,
}

fn diminishing(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| b.total_cmp(a));
    v.iter()
        .enumerate()
        .map(|(i, x)| if i == 0 { *x } else { x * 0.35 })
        .sum()
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n).collect();
        format!("{t}…")
    }
}

impl Kb {
    fn matcher(&self) -> Result<&Matcher, KbError> {
        if let Some(m) = self.matcher.get() {
            return Ok(m);
        }
        let m = Matcher::load(self)?;
        Ok(self.matcher.get_or_init(|| m))
    }

    /// Loads the in-memory matcher now (otherwise done by the first search).
    pub fn prepare(&self) -> Result<(), KbError> {
        self.matcher().map(|_| ())
    }

    /// Caps, decodes, normalises and extracts signals from raw input bytes.
    pub fn analyze(&self, input: &[u8]) -> Query {
        let binary = normalize::looks_binary(input);
        let decoded = if binary {
            let capped = normalize::cap_and_decode(input);
            let runs = normalize::printable_runs(capped.as_bytes(), 6);
            String::from_utf8_lossy(&runs).into_owned()
        } else {
            normalize::cap_and_decode(input)
        };
        let normalized = normalize::normalize(&decoded);
        let signals = signals::extract(&normalized);
        Query {
            normalized,
            signals,
            binary,
        }
    }

    /// Ranks diagnoses for `text`.
    pub fn search(
        &self,
        text: &str,
        facts: Option<&Diagnosis>,
        limit: usize,
    ) -> Result<Vec<Hit>, KbError> {
        let q = self.analyze(text.as_bytes());
        self.search_query(&q, facts, limit)
    }

    /// Ranks diagnoses for an analysed paste.
    pub fn search_query(
        &self,
        q: &Query,
        facts: Option<&Diagnosis>,
        limit: usize,
    ) -> Result<Vec<Hit>, KbError> {
        let m = self.matcher()?;
        let text = &q.normalized;
        if text.trim().is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let lower = text.to_lowercase();
        let mut cands: HashMap<String, Cand> = HashMap::new();

        // 1. signatures (strong) and code messages
        let mut sig_hit = vec![false; m.sigs.len()];
        let mut msg_keys: BTreeSet<String> = BTreeSet::new();
        let mut check_regex = Vec::new();
        let mut found = vec![false; m.needles.len()];
        if lower.len() <= SMALL_TEXT {
            for (i, n) in m.needles.iter().enumerate() {
                found[i] = memchr::memmem::find(lower.as_bytes(), n.as_bytes()).is_some();
            }
        } else {
            let ac = m.ac.get_or_init(|| {
                AhoCorasick::builder()
                    .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
                    .build(&m.needles)
                    .ok()
            });
            if let Some(ac) = ac {
                for mat in ac.find_overlapping_iter(&lower) {
                    found[mat.pattern().as_usize()] = true;
                }
            }
        }
        for (i, _) in found.iter().enumerate().filter(|(_, f)| **f) {
            match &m.pats[i] {
                Pat::Sig(i) => sig_hit[*i] = true,
                Pat::Prefilter(i) => check_regex.push(*i),
                Pat::Message(k) => {
                    msg_keys.insert(k.clone());
                }
            }
        }
        check_regex.sort_unstable();
        check_regex.dedup();
        check_regex.extend(m.unfiltered.iter().copied());
        for i in check_regex {
            let s = &m.sigs[i];
            if sig_hit[i] {
                continue;
            }
            let owner = &m.sigs[s.same_as];
            let re = owner
                .regex
                .get_or_init(|| crate::model::compile_signature_regex(&owner.pattern).ok());
            if re.as_ref().is_some_and(|r| r.is_match(text.as_bytes())) {
                sig_hit[i] = true;
            }
        }
        for (i, s) in m.sigs.iter().enumerate() {
            if !sig_hit[i] {
                continue;
            }
            let spec = (s.pattern.chars().count().min(80) as f64) / 10.0;
            let c = cands.entry(s.entry.clone()).or_default();
            c.sig.push(s.weight * (8.0 + spec));
            c.matched
                .push(format!("signature ({}): {}", s.kind, short(&s.pattern, 90)));
        }

        // 2. codes: names, messages, numbers, Xids
        let mut keys: BTreeMap<String, (f64, String)> = BTreeMap::new();
        let mut add_key = |k: String, strength: f64, why: String| {
            let e = keys.entry(k).or_insert((0.0, String::new()));
            if strength > e.0 {
                *e = (strength, why);
            }
        };
        for n in &q.signals.code_names {
            for k in self.code_keys_named(n)? {
                add_key(k.clone(), 9.0, format!("code name {n} ({k})"));
            }
        }
        for k in msg_keys {
            add_key(k.clone(), 6.0, format!("code message of {k}"));
        }
        for n in &q.signals.cuda_numbers {
            for lib in ["cuda", "cudart"] {
                let k = format!("{lib}:{n}");
                if !self.codes_where("key", &k)?.is_empty() {
                    add_key(k.clone(), 3.5, format!("error number {n} ({k})"));
                }
            }
        }
        for n in &q.signals.nccl_numbers {
            add_key(format!("nccl:{n}"), 3.5, format!("NCCL result {n}"));
        }
        for n in &q.signals.xids {
            add_key(format!("xid:{n}"), 9.0, format!("Xid {n}"));
        }
        for (k, (strength, why)) in keys {
            let rows = self.codes_where("key", &k)?;
            if rows.is_empty() {
                continue;
            }
            let linked: BTreeSet<&String> = rows.iter().flat_map(|r| r.linked.iter()).collect();
            if linked.is_empty() {
                let c = cands.entry(rows[0].id.clone()).or_default();
                c.code.push(strength * 0.8);
                c.matched.push(why.clone());
                c.code_key = Some(k.clone());
            }
            for id in linked {
                let c = cands.entry(id.clone()).or_default();
                c.code.push(strength);
                c.matched.push(why.clone());
            }
        }

        // 3. BM25 (weak)
        // Binary input only counts exact evidence: its printable runs are mostly noise.
        let bm = if q.binary {
            Vec::new()
        } else {
            self.bm25(text, 40)?
        };
        let max_bm = bm.iter().map(|(s, _, _)| *s).fold(0.0_f64, f64::max);
        for (s, id, kind) in &bm {
            let rel = if max_bm > 0.0 { s / max_bm } else { 0.0 };
            // raw BM25 also matters: a weak best match should not look strong
            let part = 6.0 * rel * (max_bm / 12.0).min(1.0);
            if kind == "code" {
                let links: Vec<String> = self
                    .codes_where("id", id)?
                    .into_iter()
                    .next()
                    .map(|c| c.linked)
                    .unwrap_or_default();
                if links.is_empty() {
                    cands.entry(id.clone()).or_default().bm25 += part * 0.5;
                } else {
                    for l in links {
                        cands.entry(l).or_default().bm25 += part * 0.3;
                    }
                }
            } else {
                cands.entry(id.clone()).or_default().bm25 += part;
            }
        }

        // 4. score, rules
        let qtokens: BTreeSet<String> = tokenize::err_tokens(text)
            .into_iter()
            .map(|(t, _, _)| t)
            .filter(|t| t.len() > 2)
            .collect();
        let mut scored: Vec<(f64, String, Cand, Vec<RuleVerdict>)> = Vec::new();
        for (id, mut c) in cands {
            let strong = diminishing(&mut c.sig) + diminishing(&mut c.code);
            let mut score = strong + c.bm25;
            if strong == 0.0 && c.bm25 < 1.5 {
                continue;
            }
            if let Some(e) = m.entries.get(&id) {
                // Framework affinity: the paste and the entry name the same tool (ollama,
                // tensorflow, nccl...) or clearly different ones.
                let pf = &q.signals.frameworks;
                if !pf.is_empty() && !e.frameworks.is_empty() {
                    let shared: Vec<&String> =
                        e.frameworks.iter().filter(|f| pf.contains(f)).collect();
                    if shared.is_empty() {
                        score *= 0.5;
                    } else {
                        score = score * 1.3 + 1.0;
                        c.matched.push(format!(
                            "names {}",
                            shared
                                .iter()
                                .map(|s| String::as_str(s))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
            }
            let mut verdicts = Vec::new();
            if let (Some(f), Some(e)) = (facts, m.entries.get(&id)) {
                for p in &e.conditions {
                    match f.outcome(p) {
                        CheckOutcome::Holds(s) => {
                            score += 10.0;
                            verdicts.push(RuleVerdict {
                                predicate: p.clone(),
                                outcome: "confirmed".into(),
                                because: s,
                            });
                        }
                        CheckOutcome::Clear(s) => {
                            score *= 0.3;
                            verdicts.push(RuleVerdict {
                                predicate: p.clone(),
                                outcome: "ruled_out".into(),
                                because: s,
                            });
                        }
                        CheckOutcome::Undecided(_) => {}
                    }
                }
            }
            if c.code_key.is_some() {
                score *= 0.9;
            }
            scored.push((score, id, c, verdicts));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        scored.truncate(limit * 4 + 8);
        // Diversity: a second hit of an already-shown category is demoted a little, so the
        // first few answers cover different explanations.
        let mut reranked = Vec::with_capacity(scored.len());
        let mut seen_cats: Vec<String> = Vec::new();
        while !scored.is_empty() {
            let adj = |x: &(f64, String, Cand, Vec<RuleVerdict>)| {
                let cat = m
                    .entries
                    .get(&x.1)
                    .map(|e| e.category.as_str())
                    .unwrap_or("code");
                let n = seen_cats.iter().filter(|c| *c == cat).count();
                x.0 * 0.85f64.powi(n as i32)
            };
            let best = (0..scored.len())
                .max_by(|&a, &b| adj(&scored[a]).total_cmp(&adj(&scored[b])).then(b.cmp(&a)))
                .unwrap_or(0);
            let x = scored.remove(best);
            seen_cats.push(
                m.entries
                    .get(&x.1)
                    .map(|e| e.category.clone())
                    .unwrap_or_else(|| "code".into()),
            );
            reranked.push(x);
        }
        let scored = reranked;
        let top = scored.first().map(|s| s.0).unwrap_or(1.0).max(1e-9);
        let mut hits = Vec::new();
        for (score, id, c, verdicts) in scored {
            if hits.len() >= limit {
                break;
            }
            let has_strong = !c.sig.is_empty() || !c.code.is_empty();
            let mut conf = 1.0 - (-score / 14.0).exp();
            if !has_strong {
                conf = conf.min(0.45);
            }
            conf *= 0.5 + 0.5 * (score / top);
            if verdicts.iter().any(|v| v.outcome == "confirmed") {
                conf = conf.max(0.9);
            }
            let conf = (conf * 100.0).round() / 100.0;
            let mut matched = c.matched;
            if let Some(meta) = m.entries.get(&id) {
                let entry = self.entry(&id)?;
                let words = entry_words(entry.as_ref(), meta, &qtokens);
                if !has_strong && words.is_empty() {
                    // BM25 on fragments only (split tokens, numbers): not a real match.
                    continue;
                }
                if !words.is_empty() {
                    matched.push(format!("words: {}", words.join(", ")));
                }
                let (fixes, confirm, sources) = entry
                    .map(|e: Entry| (e.fixes, e.confirm, e.sources))
                    .unwrap_or_default();
                hits.push(Hit {
                    id: id.clone(),
                    kind: "curated".into(),
                    category: meta.category.clone(),
                    layer: meta.layer.clone(),
                    title: meta.title.clone(),
                    summary: meta.summary.clone(),
                    score: (score * 100.0).round() / 100.0,
                    confidence: conf.clamp(0.0, 0.99),
                    matched,
                    fixes,
                    confirm,
                    sources,
                    verdicts,
                    conditions: meta.conditions.clone(),
                });
            } else if let Some(code) = self.codes_where("id", &id)?.first() {
                hits.push(code_hit(code, score, conf, matched));
            }
        }
        Ok(hits)
    }

    /// Code rows whose `col` (`key` or `id`) equals `val`.
    fn codes_where(&self, col: &str, val: &str) -> Result<Vec<CodeMeta>, KbError> {
        let sql = match col {
            "id" => "SELECT id, library, name, message, source, linked FROM codes WHERE id = ?1",
            _ => "SELECT id, library, name, message, source, linked FROM codes WHERE key = ?1",
        };
        let mut st = self.db.prepare_cached(sql)?;
        let rows = st.query_map([val], |r| {
            let linked: String = r.get(5)?;
            Ok(CodeMeta {
                id: r.get(0)?,
                library: r.get(1)?,
                name: r.get(2)?,
                message: r.get(3)?,
                source: r.get(4)?,
                linked: linked
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(KbError::from)
    }

    /// Code keys whose symbolic name is `name` (case-insensitive).
    fn code_keys_named(&self, name: &str) -> Result<Vec<String>, KbError> {
        let mut st = self
            .db
            .prepare_cached("SELECT key FROM codes WHERE name = ?1 COLLATE NOCASE")?;
        let rows = st.query_map([name], |r| r.get(0))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(KbError::from)
    }

    /// BM25 over the index: (score, id, kind), best first.
    fn bm25(&self, text: &str, n: usize) -> Result<Vec<(f64, String, String)>, KbError> {
        let mut w: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        // Pure numbers (line numbers, sizes, pids) are mostly noise for BM25 and make it
        // slow; error numbers are handled as signals.
        let numeric = |t: &str| t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        let mut numbers = 0;
        for (t, _, _) in tokenize::err_tokens(text) {
            if numeric(&t) {
                // a few multi-digit numbers (error codes like 217) may still help
                if t.len() < 3 || numbers >= 16 {
                    continue;
                }
                numbers += 1;
            }
            if seen.insert(t.clone()) {
                w.push(t);
            }
        }
        let mut s: Vec<String> = Vec::new();
        let mut seen_s = BTreeSet::new();
        for t in tokenize::split_tokens(text) {
            if t.len() > 1 && !numeric(&t) && seen_s.insert(t.clone()) {
                s.push(t);
            }
        }
        let trim = |v: &mut Vec<String>| {
            if v.len() > MAX_TERMS {
                let tail = v.split_off(v.len() - MAX_TERMS / 2);
                v.truncate(MAX_TERMS / 2);
                v.extend(tail);
            }
        };
        trim(&mut w);
        trim(&mut s);
        let mut subs: Vec<(Occur, Box<dyn TQuery>)> = Vec::new();
        for (i, (field, boost)) in self.fields.text.iter().enumerate() {
            let terms = if i % 2 == 0 { &w } else { &s };
            for t in terms {
                let term = Term::from_field_text(*field, t);
                if self.searcher.doc_freq(&term)? == 0 {
                    continue;
                }
                let tq = TermQuery::new(term, IndexRecordOption::WithFreqs);
                subs.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), *boost)),
                ));
            }
        }
        if subs.is_empty() {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new(subs);
        let top = self
            .searcher
            .search(&query, &TopDocs::with_limit(n).order_by_score())?;
        let mut out = Vec::new();
        for (score, addr) in top {
            let doc: TantivyDocument = self.searcher.doc(addr)?;
            let get = |f| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            out.push((score as f64, get(self.fields.id), get(self.fields.kind)));
        }
        Ok(out)
    }
}

/// Query tokens that appear in the entry's own text (title, summary, keywords, signatures).
fn entry_words(entry: Option<&Entry>, meta: &EntryMeta, q: &BTreeSet<String>) -> Vec<String> {
    let mut text = format!("{} {}", meta.title, meta.summary);
    if let Some(e) = entry {
        text.push(' ');
        text.push_str(&e.keywords.join(" "));
        for s in &e.signatures {
            text.push(' ');
            text.push_str(s.pattern());
        }
    }
    const STOP: &[&str] = &[
        "the", "and", "for", "not", "with", "this", "that", "are", "was", "from", "error", "has",
        "you", "your", "can", "cuda",
    ];
    let toks: BTreeSet<String> = tokenize::err_tokens(&text)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    q.iter()
        .filter(|t| toks.contains(*t) && !STOP.contains(&String::as_str(t)))
        .take(12)
        .cloned()
        .collect()
}

fn code_hit(code: &CodeMeta, score: f64, conf: f64, matched: Vec<String>) -> Hit {
    let layer = if code.id.starts_with("xid") {
        "hardware"
    } else if code.id.starts_with("cuda-") || code.id.starts_with("nvml") {
        "driver"
    } else if code.id.starts_with("nccl") {
        "multi_gpu"
    } else {
        "runtime"
    };
    let urls: Vec<Source> = code
        .source
        .split_whitespace()
        .filter(|w| w.starts_with("http"))
        .map(|u| Source {
            url: u.trim_end_matches([')', ';', ',', '.']).to_string(),
            title: code.library.clone(),
        })
        .collect();
    Hit {
        id: code.id.clone(),
        kind: "code".into(),
        category: "code".into(),
        layer: layer.into(),
        title: format!("{}: {}", code.name, code.message),
        summary: format!(
            "{} {} ({}). No curated diagnosis explains it yet; see `gpukb explain {}`.",
            code.library, code.name, code.message, code.id
        ),
        score: (score * 100.0).round() / 100.0,
        confidence: (conf.min(0.6) * 100.0).round() / 100.0,
        matched,
        fixes: Vec::new(),
        confirm: Vec::new(),
        sources: urls,
        verdicts: Vec::new(),
        conditions: Vec::new(),
    }
}
