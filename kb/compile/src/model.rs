//! The schema of a curated entry (`kb/entries/<id>.toml`) and the structural checks on it.
//!
//! `kb/build.rs` (through this crate, a build-dependency) and `gpukb kb lint DIR` (a normal
//! dependency) call the same functions, so the build and the lint apply exactly the same
//! checks; `gpukb_kb::model` re-exports this module.

use serde::{Deserialize, Serialize};

/// Layers an entry may sit in (kb/FORMAT.md). `memory_and_kernels` is accepted as the
/// spelling used by `categories.tsv`.
pub const LAYERS: &[&str] = &[
    "driver",
    "runtime",
    "framework",
    "kernel_image",
    "toolchain",
    "memory",
    "memory_and_kernels",
    "multi_gpu",
    "container_wsl",
    "jetson",
    "hardware",
];

/// Platforms a fix may target (kb/FORMAT.md).
pub const PLATFORMS: &[&str] = &[
    "pip", "conda", "apt", "driver", "docker", "jetson", "source", "windows", "config", "any",
];

/// Frameworks and tools recognised, with the lowercase needles that name them.
pub const FRAMEWORKS: &[(&str, &[&str])] = &[
    ("pytorch", &["torch", "pytorch"]),
    ("tensorflow", &["tensorflow"]),
    ("jax", &["jaxlib", "jax."]),
    ("vllm", &["vllm"]),
    ("comfyui", &["comfyui", "comfy"]),
    (
        "stable-diffusion-webui",
        &["stable-diffusion-webui", "webui"],
    ),
    ("ollama", &["ollama"]),
    ("llama.cpp", &["llama.cpp", "ggml", "llama-server"]),
    ("tensorrt", &["tensorrt", "libnvinfer"]),
    (
        "onnxruntime",
        // its own messages name it too: a node's failure, its execution providers, the Rust
        // binding's log target
        &[
            "onnxruntime",
            "non-zero status code returned while running",
            "executionprovider",
            // the Rust binding's log targets (`ort::` alone is the end of `transport::`)
            "ort::logging",
            "ort::session",
            "ort::execution_providers",
        ],
    ),
    ("docker", &["docker", "nvidia-container"]),
    ("kubernetes", &["kubernetes", "kubelet", "k8s"]),
    ("wsl", &["wsl"]),
    ("jetson", &["jetson", "tegra", "jetpack", "l4t"]),
    ("conda", &["conda"]),
    ("nccl", &["nccl"]),
    ("deepspeed", &["deepspeed"]),
    ("xformers", &["xformers"]),
    (
        "flash-attn",
        &["flash_attn", "flash-attn", "flashattention"],
    ),
    ("bitsandbytes", &["bitsandbytes"]),
    ("triton", &["triton"]),
    ("mmcv", &["mmcv"]),
    ("cupy", &["cupy"]),
    ("nvcc", &["nvcc"]),
    ("dkms", &["dkms"]),
];

/// Names of the frameworks and tools that `text` mentions.
pub fn frameworks_in(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    FRAMEWORKS
        .iter()
        .filter(|(_, needles)| needles.iter().any(|n| lower.contains(n)))
        .map(|(name, _)| *name)
        .collect()
}

/// One curated diagnosis, as written in `kb/entries/<id>.toml`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Kebab-case id, equal to the file stem.
    pub id: String,
    /// A category from `kb/categories.tsv`.
    pub category: String,
    /// One of [`LAYERS`].
    pub layer: String,
    /// One-line title.
    pub title: String,
    /// What is wrong and why.
    pub summary: String,
    /// Code keys (`cuda:209`, `xid:79`, `CUDA_ERROR_NO_BINARY_FOR_GPU`) this diagnosis explains.
    #[serde(default)]
    pub codes: Vec<String>,
    /// Extra search terms.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Literal substrings and regexes of real error text.
    #[serde(default)]
    pub signatures: Vec<Signature>,
    /// How to confirm on this machine.
    #[serde(default)]
    pub confirm: Vec<Confirm>,
    /// Fixes, per platform.
    #[serde(default)]
    pub fixes: Vec<Fix>,
    /// Predicates over machine facts that confirm or rule out this entry.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Primary documents and threads.
    #[serde(default)]
    pub sources: Vec<Citation>,
    /// Claims of this entry that a source puts in doubt, stated with that source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<Doubt>,
}

/// A claim of the entry that is doubtful, why, and the source that says so.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Doubt {
    /// The claim in doubt, as the entry makes it.
    pub claim: String,
    /// What the source says instead, and what is still unknown.
    pub note: String,
    /// URL of the source behind the doubt.
    pub source: String,
}

/// A literal substring (case-insensitive) or a regex of real error text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    /// Case-insensitive substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
    /// Regex (matched case-insensitively).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Lower for generic signatures; default 1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

impl Signature {
    /// The weight, defaulting to 1.0.
    pub fn weight(&self) -> f64 {
        self.weight.unwrap_or(1.0)
    }
    /// The pattern text, whichever kind it is.
    pub fn pattern(&self) -> &str {
        self.literal
            .as_deref()
            .or(self.regex.as_deref())
            .unwrap_or("")
    }
}

/// A command that confirms the diagnosis and what to look for in its output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    /// The command to run.
    pub command: String,
    /// What its output shows when the diagnosis is right.
    #[serde(default)]
    pub expect: String,
    /// What each possible answer of the command means: it tells this cause apart from
    /// the others its signatures share text with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
}

/// One possible answer of a confirm command and what it means.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// What the command shows (`the versions differ`, `no nvidia module`).
    #[serde(rename = "if")]
    pub if_: String,
    /// What that means for the diagnosis.
    pub means: String,
    /// Entries this answer rules out (ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules_out: Vec<String>,
}

/// A fix for one platform.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    /// One of [`PLATFORMS`].
    pub platform: String,
    /// One-line title.
    pub title: String,
    /// Exact commands or steps.
    #[serde(default)]
    pub steps: Vec<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A predicate over machine facts (see `rules.rs`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The predicate name.
    pub when: String,
}

/// A cited source.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Source")]
pub struct Citation {
    /// http(s) URL.
    pub url: String,
    /// Title of the document.
    #[serde(default)]
    pub title: String,
}

/// Parses an entry's TOML text, with a precise message on failure.
pub fn parse_entry(text: &str) -> Result<Entry, String> {
    toml::from_str::<Entry>(text).map_err(|e| e.to_string().trim_end().replace('\n', " | "))
}

/// A signature's literal spaces, each also matching a line break: a mail client, a forum or
/// a narrow terminal breaks a long message where a space was (`is available` /
/// `is\navailable`). Only a space the pattern writes (not one inside a class, not an
/// escaped one, not in a `(?x)` pattern) changes, so `.` still stops at a line's end.
pub fn spaces_span_line_breaks(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains(' ') || pattern.contains("(?x") {
        return pattern.into();
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '[' if !class => {
                class = true;
                out.push(c);
                // a `]` first in a class (or after `^`) is a member, not the end
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().unwrap_or(']'));
                }
            }
            // a POSIX class inside a class (`[[:space:] ]`) ends at its own `:]`
            '[' if class && chars.peek() == Some(&':') => {
                out.push(c);
                for n in chars.by_ref() {
                    out.push(n);
                    if n == ']' {
                        break;
                    }
                }
            }
            ']' if class => {
                class = false;
                out.push(c);
            }
            ' ' if !class => out.push_str("[ \\n]"),
            _ => out.push(c),
        }
    }
    out.into()
}

/// Builds the case-insensitive regex used for a regex signature.
/// Signature regexes run over bytes with ASCII classes (`\w`, `\b`, `\d` are ASCII):
/// error text is ASCII, and Unicode tables make compiling each regex cost milliseconds.
pub fn compile_signature_regex(pattern: &str) -> Result<regex::bytes::Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(&spaces_span_line_breaks(pattern))
        .unicode(false)
        .case_insensitive(true)
        .size_limit(2 << 20)
        .build()
}

/// The same regex as [`compile_signature_regex`], built for search: it only answers
/// whether the text matches, and without a literal prefilter of its own (search runs it
/// only on texts that hold its prefilter literals already). Half the build cost, the same
/// matches.
pub fn signature_search_regex(
    pattern: &str,
) -> Result<regex_automata::meta::Regex, Box<regex_automata::meta::BuildError>> {
    let syntax = regex_automata::util::syntax::Config::new()
        .unicode(false)
        .utf8(false)
        .case_insensitive(true);
    let config = regex_automata::meta::Config::new()
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
        .auto_prefilter(false)
        .utf8_empty(false)
        .nfa_size_limit(Some(2 << 20));
    regex_automata::meta::Builder::new()
        .syntax(syntax)
        .configure(config)
        .build(&spaces_span_line_breaks(pattern))
        .map_err(Box::new)
}

/// Whether a signature matches `text` (literal: case-insensitive substring).
pub fn signature_matches(sig: &Signature, text: &str) -> bool {
    if let Some(lit) = &sig.literal {
        // as search reads it: a literal matches across a line break
        return text
            .to_lowercase()
            .replace('\n', " ")
            .contains(&lit.to_lowercase());
    }
    if let Some(re) = &sig.regex {
        // the regex search runs, so examples check what search matches
        return signature_search_regex(re)
            .map(|r| r.is_match(text.as_bytes()))
            .unwrap_or(false);
    }
    false
}

/// One problem found by [`check_entry`].
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Hard problems make the entry unusable and fail the build; the rest are lint errors.
    pub hard: bool,
    /// What is wrong, precisely.
    pub message: String,
}

impl Problem {
    /// A problem that leaves the entry out.
    fn hard(message: String) -> Self {
        Self {
            hard: true,
            message,
        }
    }

    /// A problem `gpukb kb lint` reports but the build accepts.
    fn soft(message: String) -> Self {
        Self {
            hard: false,
            message,
        }
    }
}

/// Structural checks on one parsed entry; returns one problem per finding.
/// `stem` is the file stem; `examples` are the entry's example texts.
pub fn check_entry(stem: &str, e: &Entry, examples: &[(String, String)]) -> Vec<Problem> {
    let mut out: Vec<Problem> = Vec::new();
    check_id(stem, e, &mut out);
    check_confirm_answers(e, &mut out);
    check_layer_and_text(e, &mut out);
    check_signatures(e, &mut out);
    check_fixes(e, &mut out);
    check_sources_and_doubts(e, &mut out);
    for c in &e.confirm {
        if c.command.trim().is_empty() {
            out.push(Problem::soft("a [[confirm]] has an empty command".into()));
        }
        if crate::fix_steps::is_windows_command(&c.command) {
            for m in crate::fix_steps::windows_problems(&c.command) {
                out.push(Problem::soft(format!("confirm: {m}")));
            }
        }
    }
    check_examples(stem, e, examples, &mut out);
    out
}

/// The id equals the file stem (hard) and is kebab-case (soft).
fn check_id(stem: &str, e: &Entry, out: &mut Vec<Problem>) {
    if e.id != stem {
        out.push(Problem::hard(format!(
            "id \"{}\" does not equal the file stem \"{}\"",
            e.id, stem
        )));
    }
    let kebab = !e.id.is_empty()
        && e.id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !e.id.starts_with('-')
        && !e.id.ends_with('-');
    if !kebab {
        out.push(Problem::soft(format!(
            "id \"{}\" is not kebab-case ([a-z0-9-])",
            e.id
        )));
    }
}

/// Each `[[confirm]]` has a command, and each of its answers both `if` and `means` (hard).
fn check_confirm_answers(e: &Entry, out: &mut Vec<Problem>) {
    for c in &e.confirm {
        if c.command.trim().is_empty() {
            out.push(Problem::hard("a [[confirm]] has an empty command".into()));
        }
        for a in &c.answers {
            if a.if_.trim().is_empty() || a.means.trim().is_empty() {
                out.push(Problem::hard(format!(
                    "an answer of `{}` needs both `if` and `means`",
                    c.command
                )));
            }
        }
    }
}

/// The layer is a known one and the title and summary are not empty (soft).
fn check_layer_and_text(e: &Entry, out: &mut Vec<Problem>) {
    if !LAYERS.contains(&e.layer.as_str()) {
        out.push(Problem::soft(format!(
            "layer \"{}\" is not one of {}",
            e.layer,
            LAYERS.join(", ")
        )));
    }
    for (name, v) in [("title", &e.title), ("summary", &e.summary)] {
        if v.trim().is_empty() {
            out.push(Problem::soft(format!("{name} is empty")));
        }
    }
}

/// There is a signature; each has exactly one of literal and regex, a regex that
/// compiles, and a weight in (0, 5].
fn check_signatures(e: &Entry, out: &mut Vec<Problem>) {
    if e.signatures.is_empty() {
        out.push(Problem::soft(
            "no [[signatures]]: at least one is required".into(),
        ));
    }
    for (i, s) in e.signatures.iter().enumerate() {
        let n = i + 1;
        match (&s.literal, &s.regex) {
            (Some(_), Some(_)) => out.push(Problem::hard(format!(
                "signature #{n} has both literal and regex; use one per [[signatures]]"
            ))),
            (None, None) => out.push(Problem::hard(format!(
                "signature #{n} has neither literal nor regex"
            ))),
            (Some(l), None) if l.trim().len() < 4 => out.push(Problem::soft(format!(
                "signature #{n} literal \"{l}\" is shorter than 4 characters"
            ))),
            (None, Some(r)) => {
                if let Err(err) = compile_signature_regex(r) {
                    let msg = err.to_string().replace('\n', " ");
                    out.push(Problem::hard(format!(
                        "signature #{n} regex '{r}' does not compile: {msg}"
                    )));
                } else if let Err(err) = signature_search_regex(r) {
                    let msg = err.to_string().replace('\n', " ");
                    out.push(Problem::hard(format!(
                        "signature #{n} regex '{r}' does not build for search: {msg}"
                    )));
                }
            }
            _ => {}
        }
        if let Some(w) = s.weight {
            if !(w > 0.0 && w <= 5.0) {
                out.push(Problem::soft(format!(
                    "signature #{n} weight {w} is outside (0, 5]"
                )));
            }
        }
    }
}

/// There is a fix; each has a known platform, steps or a note, and well-formed steps (soft).
fn check_fixes(e: &Entry, out: &mut Vec<Problem>) {
    if e.fixes.is_empty() {
        out.push(Problem::soft(
            "no [[fixes]]: at least one is required".into(),
        ));
    }
    for (i, f) in e.fixes.iter().enumerate() {
        if !PLATFORMS.contains(&f.platform.as_str()) {
            out.push(Problem::soft(format!(
                "fix #{} platform \"{}\" is not one of {}",
                i + 1,
                f.platform,
                PLATFORMS.join(", ")
            )));
        }
        if f.steps.is_empty() && f.note.as_deref().unwrap_or("").is_empty() {
            out.push(Problem::soft(format!(
                "fix #{} has neither steps nor a note",
                i + 1
            )));
        }
        for (j, st) in f.steps.iter().enumerate() {
            let windows = if f.platform == "windows" {
                crate::fix_steps::windows_problems(st)
            } else {
                Vec::new()
            };
            for m in crate::fix_steps::step_problems(st)
                .into_iter()
                .chain(windows)
            {
                out.push(Problem::soft(format!(
                    "fix #{} step #{}: {m}",
                    i + 1,
                    j + 1
                )));
            }
        }
        if let Some(n) = f.note.as_deref().filter(|n| n.contains("pip install")) {
            for m in crate::fix_steps::step_problems(n) {
                out.push(Problem::soft(format!("fix #{} note: {m}", i + 1)));
            }
        }
    }
}

/// There is a source; every source and doubt names an http(s) URL, and each doubt has a
/// claim and a note (soft).
fn check_sources_and_doubts(e: &Entry, out: &mut Vec<Problem>) {
    if e.sources.is_empty() {
        out.push(Problem::soft(
            "no [[sources]]: at least one is required".into(),
        ));
    }
    for (i, s) in e.sources.iter().enumerate() {
        if !(s.url.starts_with("https://") || s.url.starts_with("http://")) || s.url.len() < 12 {
            out.push(Problem::soft(format!(
                "source #{} url \"{}\" is not an http(s) URL",
                i + 1,
                s.url
            )));
        }
    }
    for (i, d) in e.doubts.iter().enumerate() {
        if d.claim.trim().is_empty() || d.note.trim().is_empty() {
            out.push(Problem::soft(format!(
                "doubt #{} needs both a claim and a note",
                i + 1
            )));
        }
        if !(d.source.starts_with("https://") || d.source.starts_with("http://")) {
            out.push(Problem::soft(format!(
                "doubt #{} source \"{}\" is not an http(s) URL",
                i + 1,
                d.source
            )));
        }
    }
}

/// There are example texts, and every usable signature matches one of them (soft).
fn check_examples(stem: &str, e: &Entry, examples: &[(String, String)], out: &mut Vec<Problem>) {
    if examples.is_empty() {
        out.push(Problem::soft(format!(
            "no example texts: add kb/examples/{stem}/1.txt with a real paste"
        )));
    }
    for (i, s) in e.signatures.iter().enumerate() {
        if s.literal.is_none() && s.regex.is_none() {
            continue;
        }
        if s.regex
            .as_deref()
            .is_some_and(|r| compile_signature_regex(r).is_err())
        {
            continue;
        }
        if !examples.is_empty() && !examples.iter().any(|(_, t)| signature_matches(s, t)) {
            out.push(Problem::soft(format!(
                "signature #{} ({}) matches none of the examples in kb/examples/{stem}/",
                i + 1,
                s.pattern()
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{signature_search_regex, spaces_span_line_breaks};

    #[test]
    fn a_patterns_own_spaces_also_match_a_line_break_and_nothing_else_changes() {
        assert_eq!(
            spaces_span_line_breaks("no kernel image is available"),
            "no[ \\n]kernel[ \\n]image[ \\n]is[ \\n]available"
        );
        // a space in a class, an escaped one, and a (?x) pattern keep their meaning
        assert_eq!(spaces_span_line_breaks("a[ \\]x]b\\ c"), "a[ \\]x]b\\ c");
        assert_eq!(spaces_span_line_breaks("[^] ]x"), "[^] ]x");
        assert_eq!(spaces_span_line_breaks("(?x) a b"), "(?x) a b");
        assert_eq!(
            spaces_span_line_breaks("[[:digit:] ]x y"),
            "[[:digit:] ]x[ \\n]y"
        );
        let re = signature_search_regex("Value 'sm_\\d+' is not defined for option").unwrap();
        assert!(re.is_match(b"nvcc fatal : Value 'sm_89' is not\ndefined for option"));
        // `.` still stops at a line's end
        let re = signature_search_regex("libcudnn.* not found").unwrap();
        assert!(!re.is_match(b"libcudnn loaded\nmodule not found"));
    }
}
