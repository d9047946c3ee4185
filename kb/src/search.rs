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

use crate::agreement::Difference;
use crate::model::{Citation, Confirm};
use crate::placement::{PlacedFix, WithheldFix};
use crate::ruling::{Confirmed, Environment, MachineFacts, RuledOut, Say};
use crate::{normalize, signals, tokenize, Kb, KbError, Signals};
use gpukb_doctor::{CheckId, Diagnosis};

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
    /// The platform the paste names (read before normalisation masks hosts and paths).
    #[serde(skip)]
    #[schemars(skip)]
    pub platform: Option<crate::placement::Named>,
    /// The machine an environment report in the paste describes (`collect_env`,
    /// `nvidia-smi`): ranked with when no machine's facts are given.
    #[serde(skip)]
    #[schemars(skip)]
    pub reported: Option<gpukb_facts::reported::Reported>,
}

/// What the machine says about a candidate.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Outcome")]
pub enum RuleOutcome {
    /// A check found the cause.
    Confirmed,
    /// A check cleared it on facts observed for it.
    RuledOut,
    /// No check decides it here.
    Unknown,
}

/// A decided check's verdict on a hit: made only from a [`Confirmed`] or a [`RuledOut`].
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RuleVerdict {
    predicate: String,
    outcome: RuleOutcome,
    because: String,
    evidence: Vec<gpukb_doctor::Evidence>,
    environment: Option<Environment>,
}

impl From<&Confirmed> for RuleVerdict {
    fn from(c: &Confirmed) -> Self {
        RuleVerdict {
            predicate: c.check.clone(),
            outcome: RuleOutcome::Confirmed,
            because: c.because.clone(),
            evidence: c.evidence.clone(),
            environment: None,
        }
    }
}

impl From<&RuledOut> for RuleVerdict {
    fn from(r: &RuledOut) -> Self {
        RuleVerdict {
            predicate: r.check().to_string(),
            outcome: RuleOutcome::RuledOut,
            because: r.because().to_string(),
            evidence: r.evidence().to_vec(),
            environment: Some(r.environment().clone()),
        }
    }
}

impl RuleVerdict {
    /// The doctor check.
    pub fn predicate(&self) -> &str {
        &self.predicate
    }
    /// Confirmed or ruled out.
    pub fn outcome(&self) -> RuleOutcome {
        self.outcome
    }
    /// The fact sentence.
    pub fn because(&self) -> &str {
        &self.because
    }
}

/// Where a hit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HitKind {
    /// A curated knowledge-base entry.
    Curated,
    /// A generated error-code entry no curated entry explains.
    Code,
}

/// One ranked diagnosis.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Hit {
    /// Entry id (curated) or generated code id (`cuda-209`, `xid-79`).
    pub id: String,
    /// "curated" or "code".
    #[schemars(with = "String")]
    pub kind: HitKind,
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
    /// Fixes: alternatives (run one), each with where it runs, fitted to the
    /// platform the paste names or the machine is on.
    pub fixes: Vec<PlacedFix>,
    /// Fixes of the entry not printed for that platform, with why.
    pub withheld_fixes: Vec<WithheldFix>,
    /// How to confirm.
    pub confirm: Vec<Confirm>,
    /// Sources.
    pub sources: Vec<Citation>,
    /// Every decided check of this entry's conditions (machine facts).
    pub verdicts: Vec<RuleVerdict>,
    /// What the machine's facts say about this candidate; `None` when no facts were applied.
    pub machine: Option<MachineVerdict>,
    /// Whether the text supports it on its own (a signature or code match, or a score
    /// near the best): only such a candidate moves first when the machine confirms it.
    #[serde(skip)]
    pub supported: bool,
    /// Checks this entry's conditions name (facts decide them).
    pub conditions: Vec<String>,
}

use gpukb_kb_compile::matcher::{EntryMeta, Pat, Tables};

struct CodeMeta {
    id: String,
    library: String,
    name: String,
    message: String,
    source: String,
    linked: Vec<String>,
}

/// Everything search needs in memory: the search tables (built at build time for the
/// embedded KB) and the regexes and automaton built on first use.
pub struct Matcher {
    /// Built only for large inputs; small ones scan each needle with memmem.
    ac: OnceCell<Option<AhoCorasick>>,
    pub(crate) t: std::borrow::Cow<'static, Tables>,
    /// The compiled regex of each signature that is a regex (by `same_as`).
    regex: Vec<OnceCell<Option<regex_automata::meta::Regex>>>,
}

impl Matcher {
    fn load(kb: &Kb) -> Result<Matcher, KbError> {
        let t = match kb.tables {
            Some(t) => std::borrow::Cow::Borrowed(t),
            None => std::borrow::Cow::Owned(gpukb_kb_compile::matcher::tables(&kb.db)?),
        };
        Ok(Matcher {
            ac: OnceCell::new(),
            regex: (0..t.sigs.len()).map(|_| OnceCell::new()).collect(),
            t,
        })
    }
}

/// What a paste's text gives evidence for, by candidate id ([`Kb::evidence`]).
pub struct TextEvidence(HashMap<String, Cand>);

impl TextEvidence {
    /// Whether the paste names a failure the KB knows: some candidate matched a
    /// signature (each names what fails: a library and soname, an API and status, a
    /// tool's message) or an error code, name, message or Xid. Words shared with entries
    /// alone are no error (prose, logs of runs that worked): they only rank candidates
    /// that such evidence brought in, and without any the paste matches nothing.
    pub fn names_a_failure(&self) -> bool {
        self.0.values().any(Cand::has_strong)
    }

    /// The best lexical score any candidate gathered.
    fn best_bm25(&self) -> f64 {
        self.0.values().map(|c| c.bm25).fold(0.0, f64::max)
    }
}

/// Whether the text reports a failure the way programs (and people reporting one) do,
/// and prose or a log of a run that worked does not: an error or warning class followed
/// by a colon (`CUDA error: out of memory`, `RuntimeError: ...`, `UserWarning: ...`), a
/// traceback, a status name (`CUDA_ERROR_*`, `CUBLAS_STATUS_*`, `cudaError*`), a call that
/// `failed with`/`returned` an error or exited with a non-zero code, `cannot`/`could
/// not`/`unable to`, a refused connection, something `not supported`, `missing`,
/// `invalid`, a `mismatch`, an `NCCL WARN` or glog/TF error line (`E0318 ... file.cc:12]`),
/// an undefined symbol, denied permission, out of memory, `not found`/`not detected`, a
/// time-out, a hang or freeze, a run slower than expected, a crash or panic, a fall back to the CPU, or a framework
/// that sees no GPU (`is_available()` False, an empty device list, `no CUDA devices
/// found`). Such a text with words an entry shares is a failure even when no signature
/// names it; the junk set (kb/tests/junk.rs) has none.
fn states_an_error(text: &str) -> bool {
    static ERROR_LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"(?im)\b(?:[a-z]*error|exception|fatal)\s*:\s*\S",
            r"|traceback \(most recent call last\)",
            r"|\b[a-z][a-z0-9]*_(?:error|status)_[a-z0-9_]+\b|\bcudaerror[a-z]+",
            r"|\b(?:fail(?:ed|s|ure)?|unable)\s+(?:to|with|while|when)\b|\bfailed\s*[:!(]",
            r"|\b(?:cannot|can't|can not|could not|couldn't|unable to)\b",
            r"|\b(?:fails|crash(?:es|ed)?|aborted|not working|does(?:n't| not) work|stopped working)\b",
            r"|\b(?:is |are )?missing\b|\bmismatch(?:ed)?\b|\bunsupported\b|\btoo old\b|\binvalid\b",
            r"|\bno module named\b|\b[a-z]*warn(?:ing)?\s*:\s*\S",
            r"|\breturned (?:an? )?(?:error|failure|status|code)\b",
            // a tool's own report of an error (CMake's "CMake Error at", firmware "reported an
            // error while", "encountered an exception")
            r"|\b[a-z]+ error at\b|\b(?:reported|raised|threw|encountered|hit)\s+(?:an?\s+)?(?:error|exception)\b",
            r"|\bexit(?:ed)? (?:with )?(?:code|status)\s*[:=]?\s*-?[1-9]",
            r"|\berror\s*(?:=|code)\s*-?[1-9]",
            r"|\bno such file or directory\b|\bconnection (?:refused|reset|closed|timed out)\b",
            r"|\b(?:is |are )?not (?:a )?(?:supported|compatible)\b|\bincompatible\b",
            r"|\bsegmentation fault\b|\bcore dumped\b|\bpanicked at\b|^\s*panic:",
            r"|\bnccl warn\b|^[ef]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.]+:\d+\]",
            r"|:\s[ef] [a-z_]+/[\w/]+\.cc:\d+\]",
            r"|\bundefined (?:symbol|reference to)\b|\bpermission denied\b|\bout of memory\b",
            r"|\bnot found\b|\btimed out\b|\btimeout (?:waiting|after|expired)\b",
            r"|\b(?:hang(?:s|ing)?|hung|freez(?:e|es|ing)|stuck|deadlock(?:s|ed)?|black screen)\b",
            // a GPU run slower than it should be (a performance failure): the slowdown
            // and what is slow (GPU, transfers, training...) in one sentence
            r"|\b(?:gpus?|cuda|nccl|pcie|bandwidth|busbw|algbw|throughput|clocks?|training|inference|cop(?:y|ies)|transfers?|memcpy|tokens)\b[^.;\n]{0,60}",
            r"(?:slow(?:er)? than (?:expected|before|it should)|far below (?:the )?(?:expected|max|peak|spec)|lower than expected|\b(?:is|are|runs?|running) (?:very |really |extremely )?slow\b)",
            r"|\bnot (?:detected|recogni[sz]ed|loaded|using)\b|\b(?:falls?|fell|falling) back to (?:the )?cpu\b",
            // a framework or tool that reports no GPU: is_available() False, an empty list
            r"|is_available\(\)\W{0,12}(?:returns?\W{0,4})?false\b",
            r"|list_physical_devices\(\W*gpu\W*\)\s*(?:>>>\s*)?\[\]",
            r"|\bno (?:(?:cuda|gpu|nvidia)[- ]?(?:capable )?(?:gpus?|devices?)?|gpus?|devices?)",
            r"\s*(?:is |are |were )?(?:found|detected|available)\b",
        ))
        .expect("a valid regex")
    });
    ERROR_LINE.is_match(text)
}

/// The evidence one candidate gathered from the paste.
#[derive(Default, Clone)]
struct Cand {
    /// Signature strengths (one per matching signature).
    sig: Vec<f64>,
    /// Code strengths (names, messages, numbers, Xids).
    code: Vec<f64>,
    /// Weak lexical evidence.
    bm25: f64,
    /// Why it matched, human readable.
    matched: Vec<String>,
    /// Set for a generated code entry that no curated entry explains.
    code_key: Option<String>,
}

impl Cand {
    fn has_strong(&self) -> bool {
        !self.sig.is_empty() || !self.code.is_empty()
    }
}

/// Every number the ranking uses, in one place. Scores are unbounded (higher is better);
/// confidences are in 0..1 (the text's: [`crate::confidence`]).
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    /// A matching signature's base strength (times its `weight`).
    pub signature: f64,
    /// Added per 10 characters of the signature's pattern (up to 80 characters).
    pub signature_per_10_chars: f64,
    /// Each further piece of evidence of one kind counts this fraction.
    pub repeat: f64,
    /// A symbolic error-code name (`CUDA_ERROR_NO_DEVICE`).
    pub code_name: f64,
    /// A code's exact message text.
    pub code_message: f64,
    /// A bare error number next to CUDA/NCCL context.
    pub code_number: f64,
    /// An Xid from a kernel log.
    pub xid: f64,
    /// A generated code entry that no curated entry explains counts this fraction.
    pub unlinked_code: f64,
    /// The best BM25 match's contribution at full strength.
    pub bm25: f64,
    /// Raw BM25 at which the best match counts fully.
    pub bm25_saturation: f64,
    /// BM25 on a generated code entry (unlinked / passed on to its curated links).
    pub bm25_code_unlinked: f64,
    /// BM25 on a code entry, passed on to each curated entry it links.
    pub bm25_code_linked: f64,
    /// Candidates with only BM25 below this are dropped.
    pub min_bm25: f64,
    /// Lexical score that alone says the paste names a failure an entry describes.
    pub failure_bm25: f64,
    /// Paste and entry name different frameworks: score times this.
    pub other_framework: f64,
    /// Paste and entry name the same framework: score times this, plus `same_framework_add`.
    pub same_framework: f64,
    /// See `same_framework`.
    pub same_framework_add: f64,
    /// Generated code entries (no curated diagnosis) times this.
    pub code_only: f64,
    /// A further hit of an already-shown category counts this much per earlier one.
    pub diversity: f64,
    /// A candidate the text supports: a strong match, or at least this fraction of the
    /// best score. Only such candidates move up when the machine confirms them.
    pub support: f64,
    /// Confidence floor of a candidate the machine confirms.
    pub confirmed_floor: f64,
    /// Confidence of the machine's failure root cause put first when nothing the text
    /// supports is confirmed (the paste is its symptom, not its statement).
    pub doctor_failure_conf: f64,
}

/// The weights `gpukb search` ranks with.
pub const WEIGHTS: Weights = Weights {
    signature: 8.0,
    signature_per_10_chars: 1.0,
    repeat: 0.35,
    code_name: 9.0,
    code_message: 6.0,
    code_number: 3.5,
    xid: 9.0,
    unlinked_code: 0.8,
    bm25: 6.0,
    bm25_saturation: 12.0,
    bm25_code_unlinked: 0.5,
    bm25_code_linked: 0.3,
    min_bm25: 1.5,
    failure_bm25: 10.0,
    other_framework: 0.5,
    same_framework: 1.3,
    same_framework_add: 1.0,
    code_only: 0.9,
    diversity: 0.6,
    support: 0.5,
    confirmed_floor: 0.9,
    doctor_failure_conf: 0.75,
};

fn diminishing(v: &mut [f64], repeat: f64) -> f64 {
    v.sort_by(|a, b| b.total_cmp(a));
    v.iter()
        .enumerate()
        .map(|(i, x)| if i == 0 { *x } else { x * repeat })
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

/// What the machine's facts say about one candidate. `ruled_out` only from a
/// [`RuleVerdict`] made of a [`RuledOut`]: a decided check, its evidence and the
/// environment it was observed in.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct MachineVerdict {
    outcome: RuleOutcome,
    check: Option<String>,
    because: String,
    root_cause: bool,
    evidence: Vec<gpukb_doctor::Evidence>,
    environment: Option<Environment>,
}

impl MachineVerdict {
    /// What a decided check says (`root`: its finding is a root cause there).
    fn decided(v: &RuleVerdict, root: bool) -> MachineVerdict {
        MachineVerdict {
            outcome: v.outcome,
            check: Some(v.predicate.clone()),
            because: v.because.clone(),
            root_cause: root && v.outcome == RuleOutcome::Confirmed,
            evidence: v.evidence.clone(),
            environment: v.environment.clone(),
        }
    }
    fn unknown(check: Option<String>, because: String) -> MachineVerdict {
        MachineVerdict {
            outcome: RuleOutcome::Unknown,
            check,
            because,
            root_cause: false,
            evidence: Vec::new(),
            environment: None,
        }
    }
    /// Confirmed, ruled out or unknown.
    pub fn outcome(&self) -> RuleOutcome {
        self.outcome
    }
    /// The doctor check that decided it (none when no check decides this entry).
    pub fn check(&self) -> Option<&str> {
        self.check.as_deref()
    }
    /// The fact sentence, or why it stays unknown.
    pub fn because(&self) -> &str {
        &self.because
    }
    /// Whether the confirming finding is a root cause on that machine (not a symptom
    /// that another finding explains).
    pub fn root_cause(&self) -> bool {
        self.root_cause
    }
    /// The observed facts the verdict rests on.
    pub fn evidence(&self) -> &[gpukb_doctor::Evidence] {
        &self.evidence
    }
    /// Where a ruling-out verdict's facts were observed.
    pub fn environment(&self) -> Option<&Environment> {
        self.environment.as_ref()
    }
}

/// One answer of a distinguishing command.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct DistinguishAnswer {
    /// What the command shows.
    #[serde(rename = "if")]
    pub if_: String,
    /// What that means.
    pub then: String,
}

/// The one command whose answer decides between the top candidates.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Distinguish {
    /// The candidates it decides between (entry ids, the first result first).
    pub between: Vec<String>,
    /// The command to run.
    pub command: String,
    /// What each answer means.
    pub answers: Vec<DistinguishAnswer>,
}

/// A full search answer: results, candidates the machine ruled out, and the check that
/// tells the top candidates apart.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Ranking {
    /// Best first; confidence never increases down the list.
    pub results: Vec<Hit>,
    /// Candidates the text supported but this machine's facts rule out (not counted by
    /// the limit).
    pub ruled_out: Vec<Hit>,
    /// When the top candidates differ in cause: what tells them apart.
    pub distinguish: Option<Distinguish>,
    /// Checks the candidates need that these facts could not decide, with why.
    pub undecided: Vec<(String, String)>,
    /// Facts the paste states that differ from the machine (the failing process is not
    /// the one gpukb observed): checks resting on them were not used.
    pub differs: Vec<Difference>,
    /// When no machine's facts were given and the paste holds an environment report, the
    /// report whose facts decided checks (`the pasted collect_env report`) and what it shows
    /// (`the driver release, the GPUs and the torch build`).
    pub reported: Option<(String, String)>,
}

/// Checks of one candidate the facts could not decide: (check, why).
type UndecidedChecks = Vec<(String, String)>;

/// A candidate after text scoring.
struct Scored {
    score: f64,
    id: String,
    cand: Cand,
    verdicts: Vec<RuleVerdict>,
    undecided: Vec<(String, String)>,
}

impl Kb {
    pub(crate) fn matcher(&self) -> Result<&Matcher, KbError> {
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
        let utf16 = normalize::decode_utf16(input);
        let input = utf16.as_deref().map_or(input, str::as_bytes);
        let binary = normalize::looks_binary(input);
        let decoded = if binary {
            let capped = normalize::cap_and_decode(input);
            let runs = normalize::printable_runs(capped.as_bytes(), 6);
            String::from_utf8_lossy(&runs).into_owned()
        } else {
            normalize::cap_and_decode(input)
        };
        let (normalized, reports) = normalize::normalize_apart(&decoded);
        let mut signals = signals::extract(&normalized);
        // An environment report is no evidence for a cause, but it names the machine
        // the paste came from (its driver, GPU and torch build).
        let reported = match reports.is_empty() {
            true => None,
            false => {
                signals.adopt_machine(signals::extract(&reports));
                gpukb_facts::reported::read(&reports)
            }
        };
        let platform = crate::placement::paste_platform(&decoded);
        Query {
            normalized,
            signals,
            binary,
            platform,
            reported,
        }
    }

    /// Ranks diagnoses for `text` (the results only).
    pub fn search(
        &self,
        text: &str,
        facts: Option<&MachineFacts>,
        limit: usize,
    ) -> Result<Vec<Hit>, KbError> {
        let q = self.analyze(text.as_bytes());
        self.search_query(&q, facts, limit)
    }

    /// Ranks diagnoses for an analysed paste (the results only).
    pub fn search_query(
        &self,
        q: &Query,
        facts: Option<&MachineFacts>,
        limit: usize,
    ) -> Result<Vec<Hit>, KbError> {
        Ok(self.rank(q, facts, limit)?.results)
    }

    /// Ranks diagnoses for an analysed paste: gathers the text's evidence, scores it with
    /// [`WEIGHTS`], ranks on text, then lets the machine's Diagnosis (when given) move a
    /// confirmed candidate first and set a ruled-out one aside.
    pub fn rank(
        &self,
        q: &Query,
        facts: Option<&MachineFacts>,
        limit: usize,
    ) -> Result<Ranking, KbError> {
        self.rank_weighted(q, facts, limit, &WEIGHTS)
    }

    /// [`Kb::rank`] with other weights: for fitting [`WEIGHTS`] on a labelled corpus
    /// (`kb/tools/fit_weights.rs`, cargo example `fit_weights`), never for answering a user.
    pub fn rank_weighted(
        &self,
        q: &Query,
        facts: Option<&MachineFacts>,
        limit: usize,
        w: &Weights,
    ) -> Result<Ranking, KbError> {
        let e = self.evidence_weighted(q, w)?;
        self.rank_evidence_weighted(q, &e, facts, limit, w)
    }

    /// Step 1 on its own: the evidence the paste's text gives (signatures, codes, BM25),
    /// for ranking it more than once ([`Kb::rank_evidence`]: on text, then with facts).
    pub fn evidence(&self, q: &Query) -> Result<TextEvidence, KbError> {
        self.evidence_weighted(q, &WEIGHTS)
    }

    fn evidence_weighted(&self, q: &Query, w: &Weights) -> Result<TextEvidence, KbError> {
        let m = self.matcher()?;
        if q.normalized.trim().is_empty() {
            return Ok(TextEvidence(HashMap::new()));
        }
        Ok(TextEvidence(self.gather(m, q, w)?))
    }

    /// Steps 2–5 over gathered evidence: score, diversify, hits, and the machine's say.
    pub fn rank_evidence(
        &self,
        q: &Query,
        e: &TextEvidence,
        facts: Option<&MachineFacts>,
        limit: usize,
    ) -> Result<Ranking, KbError> {
        self.rank_evidence_weighted(q, e, facts, limit, &WEIGHTS)
    }

    fn rank_evidence_weighted(
        &self,
        q: &Query,
        e: &TextEvidence,
        facts: Option<&MachineFacts>,
        limit: usize,
        w: &Weights,
    ) -> Result<Ranking, KbError> {
        let m = self.matcher()?;
        let names_failure = e.names_a_failure()
            || e.best_bm25() >= w.failure_bm25
            || (states_an_error(&q.normalized) && e.best_bm25() >= w.min_bm25);
        if q.normalized.trim().is_empty() || limit == 0 || !names_failure {
            return Ok(Ranking::default());
        }
        // With no machine given, a report in the paste is the failing machine's facts.
        let of_report = match (facts, &q.reported) {
            (None, Some(r)) => Some(MachineFacts::from_report(r)),
            _ => None,
        };
        let facts = facts.or(of_report.as_ref());
        let differs = facts
            .map(|f| crate::agreement::compare(&q.signals, f.fingerprint()).differs)
            .unwrap_or_default();
        let scored = score(m, q, e.0.clone(), facts.map(|f| (f, &differs[..])), w);
        // Everything the text supports at all, best first: the doctor's entries are
        // looked up here, not only among the candidates kept for display (a small
        // change in the scores elsewhere must not make an entry unsupported).
        // Only the doctor's lookup reads it: nothing to build without machine facts.
        let supported: Vec<(String, String)> = match facts {
            Some(_) => (scored.iter())
                .map(|x| {
                    let cat = m.t.entry(&x.id).map_or("code", |e| m.t.str(e.category));
                    (x.id.clone(), cat.to_string())
                })
                .collect(),
            None => Vec::new(),
        };
        let pool = diversify(m, scored, limit * 4 + 8, w);
        let hits = self.to_hits(m, q, pool, w)?;
        let mut r = machine_rank(self, hits, supported, facts, limit, w);
        r.differs = differs;
        r.reported = q
            .reported
            .as_ref()
            .filter(|_| of_report.is_some())
            .map(|r| (r.describe(), r.shows()));
        // A report does not show the platform (container, WSL2, Jetson): only the text does.
        let (platform, basis) = match (q.platform, facts) {
            (Some(n), _) => (Some(n.platform), n.because),
            (None, Some(f)) if !f.reported() => (Some(f.platform()), "the machine's facts say so"),
            (None, _) => (None, ""),
        };
        // The machine's values fill the KB's placeholders, unless the paste says the
        // failing process is not the machine observed.
        let named = crate::placement::placeholders_in(
            r.results
                .iter()
                .chain(r.ruled_out.iter())
                .flat_map(|h| h.fixes.iter().map(|f| &f.fix)),
        );
        let values = facts
            .filter(|_| r.differs.is_empty() && !named.is_empty())
            .map(|f| crate::placement::MachineValues::for_placeholders(f.fingerprint(), &named));
        let mut impossible = BTreeSet::new();
        for h in r.results.iter_mut().chain(r.ruled_out.iter_mut()) {
            if let Some(v) = &values {
                for f in &mut h.fixes {
                    crate::placement::fill(&mut f.fix, v);
                }
            }
            let fixes: Vec<_> = std::mem::take(&mut h.fixes)
                .into_iter()
                .map(|f| f.fix)
                .collect();
            h.confirm = crate::placement::place_confirms(platform, std::mem::take(&mut h.confirm));
            let p = crate::placement::place(platform, &h.id, fixes);
            if p.nothing_left_to_do {
                impossible.insert(h.id.clone());
            }
            h.fixes = p.fixes;
            h.withheld_fixes = p.withheld;
            for w in &mut h.withheld_fixes {
                w.why = format!("{} ({basis})", w.why);
            }
        }
        // A cause whose every remedy the platform forbids (a kernel-module cause under
        // WSL2) goes after the others; confidence still never increases down the list.
        if !impossible.is_empty() {
            let (mut keep, late): (Vec<Hit>, Vec<Hit>) = std::mem::take(&mut r.results)
                .into_iter()
                .partition(|h| !impossible.contains(&h.id));
            keep.extend(late);
            let mut cap = 1.0_f64;
            for h in &mut keep {
                h.confidence = h.confidence.min(cap);
                cap = h.confidence;
            }
            r.results = keep;
        }
        // The command that tells the first two causes apart, from the confirm commands
        // placed for this platform (a Windows paste gets one that runs in PowerShell, or
        // none: the `gpukb doctor` fallback does not run on Windows).
        r.distinguish = distinguish(self, &r.results).filter(|d| {
            platform != Some(gpukb_doctor::fixes::Platform::Windows)
                || crate::placement::is_windows_command(&d.command)
                || crate::placement::posix_only_reasons(&d.command).is_empty()
        });
        Ok(r)
    }

    /// Step 1: every candidate the paste's text gives evidence for: the
    /// signatures it matches (strong), the error codes it names, and BM25 (weak).
    fn gather(
        &self,
        m: &Matcher,
        q: &Query,
        w: &Weights,
    ) -> Result<HashMap<String, Cand>, KbError> {
        let mut cands: HashMap<String, Cand> = HashMap::new();
        // signatures (strong) and code messages
        let (sig_hit, msg_keys) = scan_signatures(m, &q.normalized);
        add_signature_evidence(m, w, &sig_hit, &mut cands);
        // codes: names, messages, numbers, Xids
        let keys = self.code_keys(q, w, msg_keys)?;
        self.add_code_evidence(keys, w, &mut cands)?;
        // BM25 (weak). Binary input only counts exact evidence: its printable runs are
        // mostly noise.
        if !q.binary {
            self.add_bm25_evidence(&q.normalized, w, &mut cands)?;
        }
        Ok(cands)
    }

    /// The code keys the paste names (code names, code messages, CUDA and NCCL
    /// numbers, Xids), each with its strongest reason.
    fn code_keys(
        &self,
        q: &Query,
        w: &Weights,
        msg_keys: BTreeSet<String>,
    ) -> Result<BTreeMap<String, (f64, String)>, KbError> {
        let mut keys: BTreeMap<String, (f64, String)> = BTreeMap::new();
        let mut add_key = |k: String, strength: f64, why: String| {
            let e = keys.entry(k).or_insert((0.0, String::new()));
            if strength > e.0 {
                *e = (strength, why);
            }
        };
        for n in &q.signals.code_names {
            for k in self.code_keys_named(n)? {
                add_key(k.clone(), w.code_name, format!("code name {n} ({k})"));
            }
        }
        for k in msg_keys {
            add_key(k.clone(), w.code_message, format!("code message of {k}"));
        }
        for n in &q.signals.cuda_numbers {
            for lib in ["cuda", "cudart"] {
                let k = format!("{lib}:{n}");
                if !self.codes_where("key", &k)?.is_empty() {
                    add_key(k.clone(), w.code_number, format!("error number {n} ({k})"));
                }
            }
        }
        // the number a named CUDA runtime call returned is its cudaError_t: as strong as the name
        for n in crate::signals::cuda_call_numbers(&q.normalized) {
            let k = format!("cudart:{n}");
            if !self.codes_where("key", &k)?.is_empty() {
                add_key(
                    k.clone(),
                    w.code_name,
                    format!("a CUDA runtime call returned {n} ({k})"),
                );
            }
        }
        for n in &q.signals.nccl_numbers {
            add_key(
                format!("nccl:{n}"),
                w.code_number,
                format!("NCCL result {n}"),
            );
        }
        for n in &q.signals.xids {
            add_key(format!("xid:{n}"), w.xid, format!("Xid {n}"));
        }
        Ok(keys)
    }

    /// Credits each code key to the entries its code links to (an unlinked code
    /// to its generated entry, weaker).
    fn add_code_evidence(
        &self,
        keys: BTreeMap<String, (f64, String)>,
        w: &Weights,
        cands: &mut HashMap<String, Cand>,
    ) -> Result<(), KbError> {
        for (k, (strength, why)) in keys {
            let rows = self.codes_where("key", &k)?;
            if rows.is_empty() {
                continue;
            }
            let linked: BTreeSet<&String> = rows.iter().flat_map(|r| r.linked.iter()).collect();
            if linked.is_empty() {
                let c = cands.entry(rows[0].id.clone()).or_default();
                c.code.push(strength * w.unlinked_code);
                c.matched.push(why.clone());
                c.code_key = Some(k.clone());
            }
            for id in linked {
                let c = cands.entry(id.clone()).or_default();
                c.code.push(strength);
                c.matched.push(why.clone());
            }
        }
        Ok(())
    }

    /// Adds the BM25 score of `text` to each entry it finds (a code's score to
    /// the entries it links to), relative to the best and damped when the best
    /// is weak.
    fn add_bm25_evidence(
        &self,
        text: &str,
        w: &Weights,
        cands: &mut HashMap<String, Cand>,
    ) -> Result<(), KbError> {
        let bm = self.bm25(text, 40)?;
        let max_bm = bm.iter().map(|(s, _, _)| *s).fold(0.0_f64, f64::max);
        for (s, id, kind) in &bm {
            let rel = if max_bm > 0.0 { s / max_bm } else { 0.0 };
            // raw BM25 also matters: a weak best match should not look strong
            let part = w.bm25 * rel * (max_bm / w.bm25_saturation).min(1.0);
            if kind == "code" {
                let links: Vec<String> = self
                    .codes_where("id", id)?
                    .into_iter()
                    .next()
                    .map(|c| c.linked)
                    .unwrap_or_default();
                if links.is_empty() {
                    cands.entry(id.clone()).or_default().bm25 += part * w.bm25_code_unlinked;
                } else {
                    for l in links {
                        cands.entry(l).or_default().bm25 += part * w.bm25_code_linked;
                    }
                }
            } else {
                cands.entry(id.clone()).or_default().bm25 += part;
            }
        }
        Ok(())
    }

    /// Step 4: hits for the ranked pool, dropping BM25-only candidates whose words the
    /// entry does not share (fragments, numbers).
    fn to_hits(
        &self,
        m: &Matcher,
        q: &Query,
        pool: Vec<Scored>,
        w: &Weights,
    ) -> Result<Vec<(Hit, UndecidedChecks)>, KbError> {
        let qtokens: BTreeSet<String> = tokenize::err_tokens(&q.normalized)
            .into_iter()
            .map(|(t, _, _)| t)
            .filter(|t| t.len() > 2)
            .collect();
        let top = pool.first().map(|s| s.score).unwrap_or(1.0).max(1e-9);
        let causes: Vec<String> = pool
            .iter()
            .map(|s| {
                m.t.entry(&s.id)
                    .map_or_else(|| s.id.clone(), |e| m.t.str(e.category).to_string())
            })
            .collect();
        let confidences = crate::confidence::ranked(
            &crate::confidence::CONFIDENCE,
            &causes
                .iter()
                .zip(&pool)
                .map(|(c, s)| (c.as_str(), s.score, s.cand.has_strong()))
                .collect::<Vec<_>>(),
        );
        let mut hits = Vec::new();
        for (
            Scored {
                score,
                id,
                cand: c,
                verdicts,
                undecided,
            },
            conf,
        ) in pool.into_iter().zip(confidences)
        {
            let has_strong = c.has_strong();
            let conf = (conf * 100.0).round() / 100.0;
            let supported = has_strong || score >= w.support * top;
            let mut matched = c.matched;
            if let Some(meta) = m.t.entry(&id) {
                let words = entry_words(&m.t, meta, &qtokens);
                if !has_strong && words.is_empty() {
                    continue;
                }
                if !words.is_empty() {
                    matched.push(format!("words: {}", words.join(", ")));
                }
                // fixes, confirm and sources: filled in for the hits shown (`with_details`)
                let hit = Hit {
                    id: id.clone(),
                    kind: HitKind::Curated,
                    category: m.t.str(meta.category).to_string(),
                    layer: m.t.str(meta.layer).to_string(),
                    title: m.t.str(meta.title).to_string(),
                    summary: m.t.str(meta.summary).to_string(),
                    score: (score * 100.0).round() / 100.0,
                    confidence: conf.clamp(0.0, 0.99),
                    matched,
                    fixes: Vec::new(),
                    withheld_fixes: Vec::new(),
                    confirm: Vec::new(),
                    sources: Vec::new(),
                    verdicts,
                    machine: None,
                    supported,
                    conditions: m.t.strs(meta.conditions).map(String::from).collect(),
                };
                hits.push((hit, undecided));
            } else if let Some(code) = self.codes_where("id", &id)?.first() {
                let mut h = code_hit(code, score, conf, matched);
                h.supported = supported;
                hits.push((h, undecided));
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
        let ti = self.text_index()?;
        let mut subs: Vec<(Occur, Box<dyn TQuery>)> = Vec::new();
        for (i, (field, boost)) in ti.fields.text.iter().enumerate() {
            let terms = if i % 2 == 0 { &w } else { &s };
            for t in terms {
                let term = Term::from_field_text(*field, t);
                if ti.searcher.doc_freq(&term)? == 0 {
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
        let top = ti
            .searcher
            .search(&query, &TopDocs::with_limit(n).order_by_score())?;
        let mut out = Vec::new();
        for (score, addr) in top {
            let doc: TantivyDocument = ti.searcher.doc(addr)?;
            let get = |f| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            out.push((score as f64, get(ti.fields.id), get(ti.fields.kind)));
        }
        Ok(out)
    }
}

/// The byte pairs a text holds, as a 65,536-bit set: a needle with a pair the text lacks
/// cannot occur in it. Most needles fail on their first pairs, so a short paste is not
/// scanned (and no searcher is built) once per needle.
struct BytePairs(Box<[u64; 1024]>);

impl BytePairs {
    fn of(text: &[u8]) -> BytePairs {
        let mut bits = Box::new([0u64; 1024]);
        for w in text.windows(2) {
            let i = usize::from(w[0]) << 8 | usize::from(w[1]);
            bits[i >> 6] |= 1 << (i & 63);
        }
        BytePairs(bits)
    }

    fn has(&self, a: u8, b: u8) -> bool {
        let i = usize::from(a) << 8 | usize::from(b);
        self.0[i >> 6] & (1 << (i & 63)) != 0
    }

    /// Whether every byte pair of `needle` is in the text (a needle shorter than a pair
    /// may be anywhere).
    fn may_hold(&self, needle: &[u8]) -> bool {
        needle.windows(2).all(|w| self.has(w[0], w[1]))
    }
}

/// Which needles (signature literals, prefilter literals, code messages) the
/// lowercased text holds: memmem for small texts, Aho-Corasick for large ones.
fn find_needles(m: &Matcher, lower: &str) -> Vec<bool> {
    let mut found = vec![false; m.t.needles.len()];
    if lower.len() <= SMALL_TEXT {
        let pairs = BytePairs::of(lower.as_bytes());
        for (i, n) in m.t.needles.iter().enumerate() {
            let needle = m.t.str(*n).as_bytes();
            found[i] =
                pairs.may_hold(needle) && memchr::memmem::find(lower.as_bytes(), needle).is_some();
        }
    } else {
        let ac = m.ac.get_or_init(|| {
            AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
                .build(m.t.needles.iter().map(|n| m.t.str(*n).as_bytes()))
                .ok()
        });
        if let Some(ac) = ac {
            for mat in ac.find_overlapping_iter(lower) {
                found[mat.pattern().as_usize()] = true;
            }
        }
    }
    found
}

/// The signatures `text` matches (by index into the tables' signatures) and the
/// code-message keys it holds. A regex signature runs only when the text holds
/// a literal of each of its prefilter groups. Literals are looked for with the text's
/// line breaks read as spaces.
fn scan_signatures(m: &Matcher, text: &str) -> (Vec<bool>, BTreeSet<String>) {
    // A literal is a phrase: it matches across a line break, where a mail client, a forum
    // or a narrow terminal broke the message at a word (regexes keep their lines).
    let lower = text.to_lowercase().replace('\n', " ");
    let mut sig_hit = vec![false; m.t.sigs.len()];
    let mut msg_keys: BTreeSet<String> = BTreeSet::new();
    let mut check_regex = Vec::new();
    let found = find_needles(m, &lower);
    let mut groups_found: Vec<(usize, usize)> = Vec::new();
    for (i, _) in found.iter().enumerate().filter(|(_, f)| **f) {
        match &m.t.pats[i] {
            Pat::Sig(i) => sig_hit[*i] = true,
            Pat::Prefilter(i, g) => groups_found.push((*i, *g)),
            Pat::Message(k) => {
                msg_keys.insert(m.t.str(*k).to_string());
            }
        }
    }
    // a regex runs only when its text holds a literal of each of its prefilter groups
    groups_found.sort_unstable();
    groups_found.dedup();
    for run in groups_found.chunk_by(|a, b| a.0 == b.0) {
        if run.len() == m.t.sigs[run[0].0].groups {
            check_regex.push(run[0].0);
        }
    }
    check_regex.extend(m.t.unfiltered.iter().copied());
    for i in check_regex {
        let s = &m.t.sigs[i];
        if sig_hit[i] {
            continue;
        }
        let owner = &m.t.sigs[s.same_as];
        let re = m.regex[s.same_as]
            .get_or_init(|| crate::model::signature_search_regex(m.t.str(owner.pattern)).ok());
        if re.as_ref().is_some_and(|r| r.is_match(text.as_bytes())) {
            sig_hit[i] = true;
        }
    }
    (sig_hit, msg_keys)
}

/// Credits each matched signature to its entry, weighted by its length.
fn add_signature_evidence(
    m: &Matcher,
    w: &Weights,
    sig_hit: &[bool],
    cands: &mut HashMap<String, Cand>,
) {
    for (i, s) in m.t.sigs.iter().enumerate() {
        if !sig_hit[i] {
            continue;
        }
        let pattern = m.t.str(s.pattern);
        let spec = (pattern.chars().count().min(80) as f64) / 10.0;
        let c = cands.entry(m.t.str(s.entry).to_string()).or_default();
        c.sig
            .push(s.weight * (w.signature + w.signature_per_10_chars * spec));
        c.matched.push(format!(
            "signature ({}): {}",
            m.t.str(s.kind),
            short(pattern, 90)
        ));
    }
}

/// Query tokens that appear in the entry's own text (title, summary, keywords, signatures).
fn entry_words(t: &Tables, meta: &EntryMeta, q: &BTreeSet<String>) -> Vec<String> {
    const STOP: &[&str] = &[
        "the", "and", "for", "not", "with", "this", "that", "are", "was", "from", "error", "has",
        "you", "your", "can", "cuda",
    ];
    q.iter()
        .filter(|w| {
            let w = String::as_str(w);
            !STOP.contains(&w) && t.sorted_contains(meta.words, w)
        })
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
    let urls: Vec<Citation> = code
        .source
        .split_whitespace()
        .filter(|w| w.starts_with("http"))
        .map(|u| Citation {
            url: u.trim_end_matches([')', ';', ',', '.']).to_string(),
            title: code.library.clone(),
        })
        .collect();
    Hit {
        id: code.id.clone(),
        kind: HitKind::Code,
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
        withheld_fixes: Vec::new(),
        confirm: Vec::new(),
        sources: urls,
        verdicts: Vec::new(),
        machine: None,
        supported: false,
        conditions: Vec::new(),
    }
}

/// Step 2: each candidate's text score (framework affinity included) and the verdicts of
/// its checks, best first. Candidates with only faint lexical evidence are dropped.
fn score(
    m: &Matcher,
    q: &Query,
    cands: HashMap<String, Cand>,
    facts: Option<(&MachineFacts, &[Difference])>,
    w: &Weights,
) -> Vec<Scored> {
    let mut scored = Vec::new();
    for (id, mut c) in cands {
        let strong = diminishing(&mut c.sig, w.repeat) + diminishing(&mut c.code, w.repeat);
        if strong == 0.0 && c.bm25 < w.min_bm25 {
            continue;
        }
        let mut score = strong + c.bm25;
        let meta = m.t.entry(&id);
        if let Some(e) = meta {
            // Framework affinity: the paste and the entry name the same tool (ollama,
            // tensorflow, nccl...) or clearly different ones.
            let pf = &q.signals.frameworks;
            if !pf.is_empty() && e.frameworks.len > 0 {
                let shared: Vec<&str> =
                    m.t.strs(e.frameworks)
                        .filter(|f| pf.iter().any(|p| p == f))
                        .collect();
                if shared.is_empty() {
                    score *= w.other_framework;
                } else {
                    score = score * w.same_framework + w.same_framework_add;
                    c.matched.push(format!("names {}", shared.join(", ")));
                }
            } else if pf.is_empty()
                && q.signals.native_source.is_some()
                && crate::model::frameworks_in(m.t.str(e.title)) == ["pytorch"]
            {
                // The error is reported from a program's own native source and the paste
                // names no PyTorch code: a diagnosis of the PyTorch build (its title names
                // PyTorch alone) is not about the code that failed.
                score *= w.other_framework;
            }
        }
        if c.code_key.is_some() {
            score *= w.code_only;
        }
        let mut verdicts = Vec::new();
        let mut undecided = Vec::new();
        if let (Some((f, differs)), Some(e)) = (facts, meta) {
            for p in m.t.strs(e.conditions) {
                match f.say(p, differs) {
                    Say::Holds(c) => verdicts.push(RuleVerdict::from(&c)),
                    Say::Clear(r) => verdicts.push(RuleVerdict::from(&r)),
                    Say::Undecided(why) => undecided.push((p.to_string(), why)),
                }
            }
        }
        scored.push(Scored {
            score,
            id,
            cand: c,
            verdicts,
            undecided,
        });
    }
    informational_last(m, q, &mut scored);
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    scored
}

/// The category of entries that explain a message as noise: the message is informational
/// and the GPU works (TensorFlow's start-up lines, a capability warning).
const INFORMATIONAL: &str = "benign_warning";

/// A line that only opens or closes a warning (Python's `file.py:283: UserWarning:` header,
/// also behind a logger's level, and its `warnings.warn(` source line): the message is on
/// the lines it introduces.
static WARNING_HEADER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)^\s*(?:(?:error|warning|info|debug|critical):\s*)?(?:\S+:\d+:\s*)?\w*warning:\s*$|^\s*warnings\.warn\(",
    )
        .expect("a valid regex")
});

/// How far below the best other candidate an informational entry is put.
const INFORMATIONAL_BELOW: f64 = 0.9;

/// An informational entry explains a paste only when nothing else in it does. The lines its
/// signatures match are taken out, and so are the header lines of a warning (they are not an
/// error; the warning's own text is kept); when what remains still matches another entry's
/// signature or states an error (a TensorFlow log carries several noise lines around the
/// real error), the entry is put below the best other candidate. A paste that is only the
/// informational message keeps it first, even where another entry quotes the same message.
fn informational_last(m: &Matcher, q: &Query, scored: &mut [Scored]) {
    let informational = |id: &str| {
        m.t.entry(id)
            .is_some_and(|e| m.t.str(e.category) == INFORMATIONAL)
    };
    let top = scored.iter().max_by(|a, b| a.score.total_cmp(&b.score));
    if !top.is_some_and(|t| informational(&t.id)) {
        return;
    }
    let best_other = scored
        .iter()
        .filter(|s| !informational(&s.id))
        .map(|s| s.score)
        .max_by(f64::total_cmp);
    let Some(best_other) = best_other else {
        return;
    };
    let rest: Vec<&str> = lines_without_matches_of(m, &q.normalized, &informational)
        .into_iter()
        .filter(|l| !l.trim().is_empty() && !WARNING_HEADER.is_match(l))
        .collect();
    let rest = rest.join("\n");
    let (hit, _) = scan_signatures(m, &rest);
    let other_signature = hit
        .iter()
        .zip(m.t.sigs.iter())
        .any(|(h, sig)| *h && !informational(m.t.str(sig.entry)));
    if !other_signature && !states_an_error(&rest) {
        return;
    }
    for s in scored.iter_mut().filter(|s| informational(&s.id)) {
        s.score = s.score.min(best_other * INFORMATIONAL_BELOW);
    }
}

/// The lines of `text` that no signature of the entries `chosen` picks matches any part of
/// (a match over several lines takes all of them).
fn lines_without_matches_of<'t>(
    m: &Matcher,
    text: &'t str,
    chosen: &dyn Fn(&str) -> bool,
) -> Vec<&'t str> {
    let (hit, _) = scan_signatures(m, text);
    let mut spans = Vec::new();
    for (_, sig) in hit
        .iter()
        .zip(m.t.sigs.iter())
        .filter(|(h, sig)| **h && chosen(m.t.str(sig.entry)))
    {
        let pattern = m.t.str(sig.pattern);
        let source = if m.t.str(sig.kind) == "literal" {
            regex::escape(pattern)
        } else {
            pattern.to_string()
        };
        // the matcher's regexes report whether, not where: this one reports spans, and
        // reads the signature as the matcher does (a space also matches a line break)
        let Ok(re) = gpukb_kb_compile::model::compile_signature_regex(&source) else {
            continue;
        };
        spans.extend(re.find_iter(text.as_bytes()).map(|f| (f.start(), f.end())));
    }
    let mut kept = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        if !spans.iter().any(|&(s, e)| s < end && e > start) {
            kept.push(line.trim_end_matches('\n'));
        }
        start = end;
    }
    kept
}

/// Step 3: the best `n` candidates, re-ordered so the first few cover different causes
/// (a further hit of an already-shown category is demoted a little).
fn diversify(m: &Matcher, mut scored: Vec<Scored>, n: usize, w: &Weights) -> Vec<Scored> {
    scored.truncate(n);
    let category = |id: &str| {
        m.t.entry(id)
            .map(|e| m.t.str(e.category).to_string())
            .unwrap_or_else(|| "code".into())
    };
    let mut out = Vec::with_capacity(scored.len());
    let mut seen: Vec<String> = Vec::new();
    while !scored.is_empty() {
        let adj = |x: &Scored| {
            let cat = category(&x.id);
            let k = seen.iter().filter(|c| **c == cat).count();
            x.score * w.diversity.powi(k as i32)
        };
        let best = (0..scored.len())
            .max_by(|&a, &b| adj(&scored[a]).total_cmp(&adj(&scored[b])).then(b.cmp(&a)))
            .unwrap_or(0);
        let x = scored.remove(best);
        seen.push(category(&x.id));
        out.push(x);
    }
    out
}

/// The machine verdict of one hit from its checks. An entry's conditions are
/// alternatives (any one that holds confirms it) except context checks (on Jetson, in a
/// container, WSL…), which only rule out: confirmed when a non-context check holds and
/// no context check is clear; ruled out when a context check is clear or every other
/// check is; unknown otherwise, with why.
fn machine_verdict(h: &Hit, undecided: &[(String, String)], d: &Diagnosis) -> MachineVerdict {
    let context = |c: &str| CheckId::from_name(c).is_some_and(CheckId::is_context);
    let is_root = |check: &str| {
        d.findings
            .iter()
            .any(|f| f.check.name() == check && f.root_cause)
    };
    let verdict = |v: &RuleVerdict| MachineVerdict::decided(v, is_root(&v.predicate));
    let with = |o: RuleOutcome, ctx: bool| {
        move |v: &&RuleVerdict| v.outcome == o && context(&v.predicate) == ctx
    };
    if let Some(v) = h.verdicts.iter().find(with(RuleOutcome::RuledOut, true)) {
        return verdict(v);
    }
    let confirmed: Vec<&RuleVerdict> = h
        .verdicts
        .iter()
        .filter(with(RuleOutcome::Confirmed, false))
        .collect();
    if let Some(v) = confirmed
        .iter()
        .find(|v| is_root(&v.predicate))
        .or(confirmed.first())
    {
        return verdict(v);
    }
    let deciding = |c: &str| !context(c);
    let clear = h.verdicts.iter().find(with(RuleOutcome::RuledOut, false));
    let open = undecided.iter().filter(|(c, _)| deciding(c)).count();
    if let (Some(v), 0) = (clear, open) {
        return verdict(v);
    }
    match undecided
        .iter()
        .find(|(c, _)| deciding(c))
        .or(undecided.first())
    {
        Some((check, why)) => MachineVerdict::unknown(Some(check.clone()), why.clone()),
        None => MachineVerdict::unknown(
            None,
            if h.conditions.iter().any(|c| deciding(c)) {
                "no doctor check decides this cause".into()
            } else {
                "this machine's context fits; no check confirms the cause itself".into()
            },
        ),
    }
}

/// The candidates sorted by what the machine says of each (step 5's first pass).
#[derive(Default)]
struct BySay {
    /// Confirmed and well supported by the text.
    first: Vec<Hit>,
    /// Confirmed root causes the text supports only weakly, with their text rank.
    weak_roots: Vec<(usize, Hit)>,
    /// The best-ranked candidate the machine confirms as a symptom that the text
    /// supports only weakly.
    weak_symptom: Option<Hit>,
    /// Neither confirmed nor ruled out, in text order.
    rest: Vec<Hit>,
    ruled_out: Vec<Hit>,
    undecided: Vec<(String, String)>,
    /// What the text supports at all (id, category), any rank, in text order: the
    /// candidates, then every other entry the text scores.
    seen: Vec<(String, String)>,
    /// Whether the machine rules out the text's own best answer.
    text_best_ruled_out: bool,
    /// The text's best answer the machine does not rule out.
    text_best_kept: Option<(String, String)>,
}

impl BySay {
    /// Moves `h` first unless a confirmed answer is there already, taking it out of the
    /// other lists.
    fn promote(&mut self, h: Hit) {
        self.rest.retain(|x| x.id != h.id);
        self.ruled_out.retain(|x| x.id != h.id);
        self.first.push(h);
    }
}

/// Step 5's first pass: each candidate's machine verdict, and where that puts it.
fn sort_by_say(
    hits: Vec<(Hit, UndecidedChecks)>,
    facts: Option<&MachineFacts>,
    limit: usize,
    w: &Weights,
) -> BySay {
    let mut s = BySay {
        seen: hits
            .iter()
            .map(|(h, _)| (h.id.clone(), h.category.clone()))
            .collect(),
        ..BySay::default()
    };
    for (pos, (mut h, und)) in hits.into_iter().enumerate() {
        if let Some(f) = facts {
            let v = machine_verdict(&h, &und, &f.diagnosis);
            for u in und {
                if !s.undecided.iter().any(|x| x.0 == u.0) && pos < limit {
                    s.undecided.push(u);
                }
            }
            let (outcome, root) = (v.outcome, v.root_cause);
            if outcome != RuleOutcome::RuledOut && s.text_best_kept.is_none() {
                s.text_best_kept = Some((h.id.clone(), h.category.clone()));
            }
            h.machine = Some(v);
            match outcome {
                RuleOutcome::Confirmed if h.supported => {
                    h.confidence = h.confidence.max(w.confirmed_floor);
                    s.first.push(h);
                    continue;
                }
                RuleOutcome::Confirmed if root => {
                    s.weak_roots.push((s.rest.len(), h));
                    continue;
                }
                RuleOutcome::Confirmed if s.weak_symptom.is_none() => {
                    s.weak_symptom = Some(h.clone());
                }
                RuleOutcome::RuledOut => {
                    s.text_best_ruled_out |= pos == 0;
                    if pos < limit {
                        s.ruled_out.push(h);
                    }
                    continue;
                }
                _ => {}
            }
        }
        s.rest.push(h);
    }
    s
}

/// Nothing the text supports is confirmed. A root cause the machine confirms keeps its
/// text rank; else the root cause of a symptom the machine confirms and the paste's
/// words point at (cuInit failing, no device) is the answer; else the machine's failure,
/// when the text's own answer is ruled out here or the text supports its entry (the
/// failure is what this machine's process runs into; the paste is its symptom).
fn when_nothing_confirmed(kb: &Kb, s: &mut BySay, facts: Option<&MachineFacts>, w: &Weights) {
    let root_confirmed = !s.weak_roots.is_empty();
    for (at, h) in std::mem::take(&mut s.weak_roots).into_iter().rev() {
        let at = at.min(s.rest.len());
        s.rest.insert(at, h);
    }
    let Some(f) = facts else {
        return;
    };
    let d = &f.diagnosis;
    if let (Some(sym), false) = (s.weak_symptom.as_ref(), root_confirmed) {
        if let Some(h) = root_cause_hit(kb, d, sym, w).filter(|h| {
            // An entry of the root finding's own category: precisely about it.
            d.findings.iter().any(|f| {
                f.root_cause
                    && f.severity == gpukb_doctor::Severity::Failure
                    && f.category == h.category
                    && h.machine.as_ref().and_then(|m| m.check.as_deref()) == Some(f.check.name())
            })
        }) {
            s.promote(h);
        }
    }
    if s.first.is_empty() {
        let best = (s.text_best_ruled_out, s.text_best_kept.as_ref());
        if let Some(h) = doctor_failure_hit(kb, f, &s.seen, best, w) {
            s.promote(h);
        }
    }
}

/// Something the text supports is confirmed: confirmed root causes the text supports
/// weakly join it (the machine and the paste agree that this part of the stack is
/// broken), and when none of them is a root cause, the root cause of the first goes
/// before it.
fn when_confirmed(kb: &Kb, s: &mut BySay, facts: Option<&MachineFacts>, w: &Weights) {
    for (_, mut h) in std::mem::take(&mut s.weak_roots) {
        h.confidence = h.confidence.max(w.confirmed_floor);
        s.first.push(h);
    }
    let Some(d) = facts.map(|f| &f.diagnosis) else {
        return;
    };
    if s.first
        .iter()
        .any(|h| h.machine.as_ref().is_some_and(|m| m.root_cause))
    {
        return;
    }
    if let Some(h) = s.first.first().and_then(|h| root_cause_hit(kb, d, h, w)) {
        s.first.retain(|x| x.id != h.id);
        s.rest.retain(|x| x.id != h.id);
        s.ruled_out.retain(|x| x.id != h.id);
        s.first.insert(0, h);
    }
}

/// Step 5: the machine decides among what the text supports. A confirmed, supported
/// candidate moves first; a ruled-out one moves to `ruled_out` (when it would have been
/// shown); unknowns keep their text rank. Confidence never increases down the results.
fn machine_rank(
    kb: &Kb,
    hits: Vec<(Hit, UndecidedChecks)>,
    supported: Vec<(String, String)>,
    facts: Option<&MachineFacts>,
    limit: usize,
    w: &Weights,
) -> Ranking {
    let mut s = sort_by_say(hits, facts, limit, w);
    let mut known: std::collections::HashSet<String> =
        s.seen.iter().map(|(id, _)| id.clone()).collect();
    for x in supported {
        if known.insert(x.0.clone()) {
            s.seen.push(x);
        }
    }
    if s.first.is_empty() {
        when_nothing_confirmed(kb, &mut s, facts, w);
    } else {
        when_confirmed(kb, &mut s, facts, w);
    }
    let BySay {
        mut first,
        rest,
        mut ruled_out,
        undecided,
        ..
    } = s;
    // Entries one finding confirms, in the order that fits the machine (a Pascal GPU's
    // entry before the Blackwell one); then a confirmed root cause before a confirmed
    // symptom it explains (stable: text order otherwise).
    if let Some(f) = facts {
        kb.order_confirmed_by_fit(f, &mut first);
    }
    first.sort_by_key(|h| !h.machine.as_ref().is_some_and(|m| m.root_cause));
    first.extend(rest);
    first.truncate(limit);
    with_details(kb, &mut first);
    with_details(kb, &mut ruled_out);
    let mut cap = 1.0_f64;
    for h in &mut first {
        h.confidence = h.confidence.min(cap);
        cap = h.confidence;
    }
    Ranking {
        results: first,
        ruled_out,
        // Decided after the fixes and confirm commands are placed for the platform.
        distinguish: None,
        undecided,
        differs: Vec::new(),
        reported: None,
    }
}

/// Fills in the fixes, confirmations and sources of curated hits from their entries: read
/// only for the hits shown, not for every candidate ranked.
fn with_details(kb: &Kb, hits: &mut [Hit]) {
    for h in hits.iter_mut() {
        if h.kind != HitKind::Curated || !(h.fixes.is_empty() && h.sources.is_empty()) {
            continue;
        }
        if let Ok(Some(e)) = kb.entry(&h.id) {
            h.fixes = e.fixes.into_iter().map(PlacedFix::unplaced).collect();
            h.confirm = e.confirm;
            h.sources = e.sources;
        }
    }
}

/// When the confirmed answer is a symptom that the machine's Diagnosis explains by a
/// root cause: that root cause's KB entry (one whose conditions name the root check, of
/// the check's category when several do), as a hit that says why it is there.
fn root_cause_hit(kb: &Kb, d: &Diagnosis, symptom: &Hit, w: &Weights) -> Option<Hit> {
    let check = symptom.machine.as_ref()?.check.as_deref()?;
    let mut finding = d.findings.iter().find(|f| f.check.name() == check)?;
    for _ in 0..8 {
        match &finding.explained_by {
            Some(id) => finding = d.findings.iter().find(|f| &f.id == id)?,
            None => break,
        }
    }
    if !finding.root_cause || finding.check.name() == check {
        return None;
    }
    let m = kb.matcher().ok()?;
    let t = &m.t;
    let mut ids: Vec<&EntryMeta> = t
        .entries
        .iter()
        .filter(|e| t.strs(e.conditions).any(|c| c == finding.check.name()))
        .collect();
    ids.sort_by_key(|e| (t.str(e.category) != finding.category, t.str(e.id)));
    let meta = ids.first()?;
    let entry = kb.entry(t.str(meta.id)).ok()??;
    let matched = format!(
        "the machine's root cause of \"{}\" [{}]",
        symptom.title, symptom.id
    );
    let confidence = symptom.confidence.max(w.confirmed_floor);
    Some(confirmed_entry_hit(
        entry,
        finding,
        symptom.score,
        confidence,
        matched,
    ))
}

/// A curated entry that the doctor's `finding` confirms on the machine, as a hit
/// that says why it is there (`matched`).
fn confirmed_entry_hit(
    entry: crate::model::Entry,
    finding: &gpukb_doctor::Finding,
    score: f64,
    confidence: f64,
    matched: String,
) -> Hit {
    let verdict = RuleVerdict::from(&Confirmed {
        check: finding.check.name().to_string(),
        because: finding.title.clone(),
        evidence: finding.evidence.clone(),
    });
    Hit {
        id: entry.id,
        kind: HitKind::Curated,
        category: entry.category,
        layer: entry.layer,
        title: entry.title,
        summary: entry.summary,
        score,
        confidence,
        matched: vec![matched],
        fixes: entry.fixes.into_iter().map(PlacedFix::unplaced).collect(),
        withheld_fixes: Vec::new(),
        confirm: entry.confirm,
        sources: entry.sources,
        verdicts: vec![verdict.clone()],
        machine: Some(MachineVerdict::decided(&verdict, true)),
        supported: false,
        conditions: entry.conditions.into_iter().map(|c| c.when).collect(),
    }
}

/// The KB entry of the machine's failure root cause, when the paste is plausibly its
/// symptom: the text's best answer was ruled out on this machine, or the text supports
/// (at any rank) an entry the doctor links to the failure. The entry is the text's own
/// answer (the best not ruled out) when the doctor links it or it is of the failure's
/// category, else, of those the doctor links that the text supports, the best fit for
/// this machine, the text's order breaking ties ([`Kb::linked_for_paste`]), else the
/// first it links.
fn doctor_failure_hit(
    kb: &Kb,
    facts: &MachineFacts,
    seen: &[(String, String)],
    (text_best_ruled_out, text_best_kept): (bool, Option<&(String, String)>),
    w: &Weights,
) -> Option<Hit> {
    let failure =
        |f: &gpukb_doctor::Finding| f.root_cause && f.severity == gpukb_doctor::Severity::Failure;
    if !facts.diagnosis.findings.iter().any(failure) {
        return None;
    }
    let findings = facts.linked_findings(kb);
    let finding = findings
        .iter()
        .find(|f| failure(f) && !f.kb_entries.is_empty())?;
    // The text's best answer not ruled out here, when the doctor links it or it is of
    // the failure's category; else, of the entries the doctor links that the text
    // supports at all, the one that fits this machine best and, among those that fit
    // it equally, the one the text ranks first.
    let seen_ids: Vec<String> = seen.iter().map(|(s, _)| s.clone()).collect();
    let supported: Option<String> = text_best_kept
        .filter(|(id, cat)| finding.kb_entries.contains(id) || *cat == finding.category)
        .map(|(id, _)| id.clone())
        .or_else(|| {
            kb.linked_for_paste(facts.fingerprint(), finding, &seen_ids)
                .into_iter()
                .next()
        });
    let id = match (&supported, text_best_ruled_out) {
        (Some(id), _) => id.as_str(),
        (None, true) => finding.kb_entries.first()?.as_str(),
        (None, false) => return None,
    };
    let entry = kb.entry(id).ok()??;
    let why = match supported {
        Some(_) => "the paste fits it and the machine's doctor names it as the failure",
        None => "the text's own answer is ruled out here; the machine's doctor names this failure",
    };
    let matched = format!("{why}: {}", finding.title);
    Some(confirmed_entry_hit(
        entry,
        finding,
        0.0,
        w.doctor_failure_conf,
        matched,
    ))
}

/// When the first result is not confirmed and the next results name a different cause:
/// the command whose answer decides between them. Answers written in the entries'
/// `[[confirm]]` come first; otherwise, when either names a doctor check, `gpukb doctor`.
fn distinguish(kb: &Kb, results: &[Hit]) -> Option<Distinguish> {
    let top = results.first()?;
    if top
        .machine
        .as_ref()
        .is_some_and(|m| m.outcome == RuleOutcome::Confirmed)
    {
        return None;
    }
    let other = results
        .iter()
        .skip(1)
        .take(2)
        .find(|h| h.category != top.category)?;
    let between = vec![top.id.clone(), other.id.clone()];
    // A command whose answers rule out one of the two decides between them; one whose
    // answers only speak of other entries is the fallback.
    let decides = |c: &&crate::model::Confirm| {
        c.answers.iter().any(|a| {
            a.rules_out
                .iter()
                .any(|id| *id == top.id || *id == other.id)
        })
    };
    let confirms = || [top, other].into_iter().flat_map(|h| h.confirm.iter());
    let chosen = confirms()
        .find(decides)
        .or_else(|| confirms().find(|c| !c.answers.is_empty()));
    if let Some(c) = chosen {
        return Some(Distinguish {
            between,
            command: c.command.clone(),
            answers: c
                .answers
                .iter()
                .map(|a| DistinguishAnswer {
                    if_: a.if_.clone(),
                    then: answer_then(kb, a),
                })
                .collect(),
        });
    }
    let answers: Vec<DistinguishAnswer> = [top, other]
        .iter()
        .filter_map(|h| {
            let check = h.conditions.first()?;
            Some(DistinguishAnswer {
                if_: format!("it reports the check `{check}`"),
                then: format!("{} [{}]", h.title, h.id),
            })
        })
        .collect();
    let mut answers = answers;
    // the same check confirming both tells nothing apart
    if answers.len() == 2 && answers[0].if_ == answers[1].if_ {
        return None;
    }
    match answers.len() {
        0 => return None,
        1 => {
            let rest = if top.conditions.is_empty() {
                top
            } else {
                other
            };
            answers.push(DistinguishAnswer {
                if_: "it does not".into(),
                then: format!("more likely {} [{}]", rest.title, rest.id),
            });
        }
        _ => {}
    }
    Some(Distinguish {
        between,
        command: "gpukb doctor".into(),
        answers,
    })
}

/// An answer's meaning, naming the entries it rules out.
fn answer_then(kb: &Kb, a: &crate::model::Answer) -> String {
    if a.rules_out.is_empty() {
        return a.means.clone();
    }
    let names: Vec<String> = a
        .rules_out
        .iter()
        .map(|id| match kb.entry(id) {
            Ok(Some(e)) => format!("{} [{id}]", e.title),
            _ => id.clone(),
        })
        .collect();
    format!("{} (rules out: {})", a.means, names.join("; "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pasted_report_names_the_machine_but_is_not_matched() {
        let kb = crate::Kb::open().expect("embedded KB");
        let paste = format!(
            "RuntimeError: CUDA error: out of memory\n$ nvidia-smi\n{}\n$ python -m torch.utils.collect_env\n{}",
            include_str!("../tests/env_reports/nvidia-smi-h200.txt"),
            include_str!("../tests/env_reports/collect_env-h200.txt")
        );
        let q = kb.analyze(paste.as_bytes());
        assert_eq!(q.normalized, "RuntimeError: CUDA error: out of memory\n");
        assert_eq!(q.signals.driver_versions, ["580.159.04"]);
        assert_eq!(q.signals.gpu_models, ["h200"]);
        assert!(q.signals.torch_versions.iter().any(|v| v == "2.11.0+cu130"));
        // nothing else of the report is evidence: no library names, no frameworks
        assert!(q.signals.sonames.is_empty() && q.signals.frameworks.is_empty());
    }

    #[test]
    fn the_byte_pair_filter_never_rejects_a_needle_the_text_holds() {
        let kb = crate::Kb::open().expect("embedded KB");
        let m = kb.matcher().expect("tables");
        let mut texts: Vec<String> = Vec::new();
        for e in m.t.entries.iter().take(60) {
            for (_, t) in kb.examples(m.t.str(e.id)).expect("examples") {
                texts.push(t.to_lowercase().replace('\n', " "));
            }
        }
        assert!(texts.len() > 50);
        let (mut held, mut rejected) = (0, 0);
        for t in &texts {
            let pairs = super::BytePairs::of(t.as_bytes());
            for n in m.t.needles.iter() {
                let n = m.t.str(*n).as_bytes();
                let holds = memchr::memmem::find(t.as_bytes(), n).is_some();
                let may = pairs.may_hold(n);
                assert!(
                    may || !holds,
                    "{:?} rejected in {t:?}",
                    String::from_utf8_lossy(n)
                );
                held += usize::from(holds);
                rejected += usize::from(!may);
            }
            // every piece of the text passes
            let b = t.as_bytes();
            for start in (0..b.len()).step_by(7) {
                assert!(pairs.may_hold(&b[start..b.len().min(start + 40)]));
            }
        }
        // the filter does its job: most needles are rejected without a scan
        assert!(
            held > 0 && rejected > held * 10,
            "held {held}, rejected {rejected}"
        );
        assert!(!super::BytePairs::of(b"cuda error").may_hold(b"cudnn"));
    }

    #[test]
    fn the_embedded_search_tables_are_those_of_the_embedded_database() {
        let kb = crate::Kb::open().expect("embedded KB");
        let built = gpukb_kb_compile::matcher::tables(&kb.db).expect("tables");
        assert!(built.sigs.len() > 100 && built.entries.len() > 100);
        assert_eq!(Some(&built), kb.tables);
    }

    #[test]
    fn a_failure_statement_is_told_from_a_run_that_worked() {
        for failed in [
            "RuntimeError: CUDA error: out of memory",
            "Traceback (most recent call last):\n  File \"x.py\", line 1",
            "cuInit returned CUDA_ERROR_NO_DEVICE",
            "./app: error while loading shared libraries: libfoo.so.1: cannot open shared object file",
            "pip: x-1.0-cp36-cp36m-linux_x86_64.whl is not a supported wheel on this platform",
            "NCCL WARN Call to connect returned Connection refused",
            ">>> torch.cuda.is_available()\nFalse",
            "no CUDA-capable device is detected",
            "panic: runtime error",
            "make: *** [all] exited with code 2",
            "E0318 11:02:44.512931  22191 cuda_dnn.cc:535] Loaded runtime CuDNN library",
            "2018-11-06 09:41:27.118342: E tensorflow/stream_executor/cuda/cuda_dnn.cc:343] x",
            "NCCL WARN Cuda failure 'out of memory'",
            "the GPU is missing after a reboot",
            "ModuleNotFoundError: No module named 'torch'",
            "UserWarning: CUDA initialization: no NVIDIA driver",
            "ollama crashes when the model loads",
            "training hangs at the first all_reduce",
            "GPU not detected after the upgrade",
            "CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineCUDACompiler.cmake:270 (message):",
            "kgspBootstrap_GH100: GSP-FMC reported an error while attempting to boot GSP",
        ] {
            assert!(super::states_an_error(failed), "{failed}");
        }
        for worked in [
            "Successfully installed torch-2.5.1",
            ">>> import torch; torch.cuda.is_available()\nTrue",
            "test result: ok. 12 passed; 0 failed; 0 ignored",
            "Build succeeded. 0 Warning(s) 0 Error(s)",
            "Process finished with exit code 0",
            "OK (0 failures, 0 errors)",
            "Detected 8 CUDA Capable device(s)",
            "I0318 11:02:44.512931  22191 gpu_device.cc:2019] Created device /gpu:0",
            "2024-03-09 19:15:45.018171: I tensorflow/core/platform/cpu_feature_guard.cc:210] ok",
            "NCCL INFO comm 0x55d1 rank 0 nranks 8 - Init COMPLETE",
            "the quick brown fox",
            "-- The CUDA compiler identification is NVIDIA 12.4.131",
            "the error rate fell at epoch 3",
        ] {
            assert!(!super::states_an_error(worked), "{worked}");
        }
    }
}
