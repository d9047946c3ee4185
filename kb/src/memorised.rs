//! The memorisation check behind `gpukb kb lint --eval DIR`: finds knowledge-base text
//! (examples and signature patterns) that copies a paste-specific part of a labelled eval
//! paste, so the KB generalises instead of memorising the pastes it is measured on.
//!
//! The rule (also in `kb/FORMAT.md`, "Memorisation lint"):
//! - **Copied span**: 60 or more characters in a row that a KB text shares with an eval
//!   paste, compared after lower-casing and collapsing every run of whitespace to one space.
//! - **Copied token**: a path, host name or version string of the paste that the KB text
//!   contains as a whole token. Paths: Unix paths of 2+ segments and Windows drive paths;
//!   paths under the system prefixes (`/usr`, `/lib`, `/etc`, `/dev`, `/proc`, `/sys`,
//!   `/bin`, `/sbin`, `/run`, `/var`, `/tmp`, `/opt/nvidia`) are product layout, not the
//!   user's, and are not checked. Host names: the host of `user@host` and of NCCL's
//!   `host:pid:tid` line prefix. Versions: three or more dot-separated numbers (with any
//!   `-suffix`, e.g. a kernel release).
//! - **Not paste-specific** (never flagged): text that also occurs in the primary-source
//!   corpus the caller passes (the KB's code tables, `shared/research/data/*.csv`: CUDA,
//!   driver and torch releases, the exact error messages), and text that occurs in pastes
//!   from two or more different source threads (product output every user sees, not one
//!   user's paste).
//!
//! Whether a token is in *some* primary source is unknowable offline; the corpus above is
//! the approximation.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

/// `kb/tables/product_messages.tsv`: exact messages products print (message, product,
/// source URL), quoted from their source code or documentation.
pub const PRODUCT_MESSAGES_TSV: &str = include_str!("../tables/product_messages.tsv");

/// `kb/tables/releases.tsv`: public releases (product, version, source URL of its release
/// notes) the KB's examples name. A release every user of that product can have is not a
/// paste-specific version.
pub const RELEASES_TSV: &str = include_str!("../tables/releases.tsv");

/// The versions of [`RELEASES_TSV`], one per line (primary-source text for the lint).
pub fn releases_text() -> String {
    RELEASES_TSV
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .map(|v| format!("{v}\n"))
        .collect()
}

/// The messages of [`PRODUCT_MESSAGES_TSV`].
pub fn product_messages() -> Vec<String> {
    PRODUCT_MESSAGES_TSV
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .filter(|m| !m.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The shortest copied run of characters that counts as memorised.
pub const MIN_SPAN: usize = 60;

/// One labelled eval paste.
#[derive(Debug, Clone)]
pub struct Paste {
    /// Case id (`e2-005`) or a line reference.
    pub id: String,
    /// The thread it came from (distinct threads make text product output).
    pub source: String,
    /// The pasted error.
    pub text: String,
}

/// One piece of KB text to check.
#[derive(Debug, Clone)]
pub struct KbText {
    /// Repository-relative file (`kb/examples/<id>/1.txt`, `kb/entries/<id>.toml`).
    pub file: String,
    /// What it is: `example`, `signature #2`.
    pub what: String,
    /// The text.
    pub text: String,
}

/// What kind of paste-specific text was copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CopyKind {
    /// A run of 60+ characters.
    Span,
    /// A path.
    Path,
    /// A host name.
    Host,
    /// A version string.
    Version,
}

impl CopyKind {
    /// The word used in lint messages.
    pub fn word(self) -> &'static str {
        match self {
            CopyKind::Span => "a span",
            CopyKind::Path => "the path",
            CopyKind::Host => "the host name",
            CopyKind::Version => "the version",
        }
    }
}

/// One finding: KB text that copies paste-specific text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Copied {
    /// The KB file.
    pub file: String,
    /// What in it (`example`, `signature #n`).
    pub what: String,
    /// The eval case copied from.
    pub case_id: String,
    /// Kind of copy.
    pub kind: CopyKind,
    /// The copied text (normalised; spans are cut to 120 characters).
    pub text: String,
}

/// Lower-cases and collapses whitespace runs to one space.
pub fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Byte offsets of every char boundary of `s`, plus its length.
fn boundaries(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

/// Every `MIN_SPAN`-character window of `s` (byte ranges).
fn windows(s: &str) -> Vec<(usize, usize)> {
    let b = boundaries(s);
    if b.len() <= MIN_SPAN {
        return Vec::new();
    }
    (0..b.len() - MIN_SPAN)
        .map(|i| (b[i], b[i + MIN_SPAN]))
        .collect()
}

fn path_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?:~|\.\.?)?(?:/[\w.+@%=-]+){2,}/?|[A-Za-z]:\\[\w.+@%=-]+(?:\\[\w.+@%=-]+)+\\?"#,
        )
        .expect("path regex")
    })
}

fn version_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b\d+\.\d+\.\d+(?:\.\d+)*(?:-[0-9A-Za-z]+)*\b").expect("version regex")
    })
}

fn host_res() -> &'static [Regex; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"[\w.-]+@([A-Za-z][\w-]*(?:\.[\w-]+)*)").expect("user@host regex"),
            Regex::new(r"(?m)^\s*([A-Za-z][\w.-]*):\d+:\d+\s").expect("nccl host regex"),
        ]
    })
}

/// Host names an installer or image gives every machine (Ubuntu's and L4T's `ubuntu`,
/// Raspberry Pi OS's `raspberrypi`): shared by thousands of pastes, so not one paste's.
const DEFAULT_HOSTS: &[&str] = &[
    "ubuntu",
    "tegra-ubuntu",
    "localhost",
    "raspberrypi",
    "debian",
    "fedora",
    "archlinux",
];

/// Unix prefixes whose paths are the product's layout, not a user's.
const SYSTEM_PREFIXES: &[&str] = &[
    "/usr/",
    "/lib/",
    "/lib64/",
    "/lib32/",
    "/etc/",
    "/dev/",
    "/proc/",
    "/sys/",
    "/bin/",
    "/sbin/",
    "/run/",
    "/var/",
    "/tmp/",
    "/opt/nvidia/",
];

/// The paths, host names and versions of one paste (lower-cased).
fn tokens(text: &str) -> BTreeSet<(CopyKind, String)> {
    let mut out = BTreeSet::new();
    for m in path_re().find_iter(text) {
        let p = m.as_str().trim_end_matches(['.', '/', '\\']).to_lowercase();
        let system = SYSTEM_PREFIXES.iter().any(|s| p.starts_with(s));
        if !system && p.len() >= 6 {
            out.insert((CopyKind::Path, p));
        }
    }
    for m in version_re().find_iter(text) {
        if !is_ipv4(m.as_str()) {
            out.insert((CopyKind::Version, m.as_str().to_lowercase()));
        }
    }
    for re in host_res() {
        for c in re.captures_iter(text) {
            if let Some(h) = c.get(1) {
                let h = h.as_str().to_lowercase();
                if h.len() >= 3 && !DEFAULT_HOSTS.contains(&h.as_str()) {
                    out.insert((CopyKind::Host, h));
                }
            }
        }
    }
    out
}

/// Four numbers 0-255 with dots: an IPv4 address (`127.0.0.1`), not a release.
fn is_ipv4(t: &str) -> bool {
    let parts: Vec<&str> = t.split('.').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<u8>().is_ok())
}

/// Whether `needle` occurs in `hay` as a whole token (not inside a longer word, path or
/// version).
fn contains_token(hay: &str, needle: &str) -> bool {
    let joins = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '\\' | '-');
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        let end = at + needle.len();
        let before = hay[..at].chars().next_back().is_none_or(|c| !joins(c));
        let after = hay[end..].chars().next();
        // A trailing '.' or '-' ends a sentence or a flag, it does not extend the token.
        let after_ok = match after {
            None => true,
            Some(c) if matches!(c, '.' | '-') => hay[end + c.len_utf8()..]
                .chars()
                .next()
                .is_none_or(|d| !d.is_alphanumeric()),
            Some(c) => !joins(c),
        };
        if before && after_ok {
            return true;
        }
        from = at + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Regex source made comparable with text: escapes of punctuation undone.
pub fn regex_as_text(re: &str) -> String {
    let mut out = String::with_capacity(re.len());
    let mut chars = re.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(d) if !d.is_alphanumeric() => out.push(d),
                Some(_) => out.push(' '),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Text every user's paste shares because the product lays it out, not the user (matched
/// on normalised text): a Python package's own files (`…/site-packages/torch/…`, the
/// package's layout wherever the interpreter lives), a Go source location in a runtime's
/// message (`process_linux.go:449`), an Itanium-mangled C++ symbol (`_zn3c104cuda…`, the
/// product's API name).
fn layout_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r#"[^\s"']*(?:site|dist)-packages[/\\][^\s"':]*"#,
            r"|\b[\w-]+\.go:\d+",
            r"|\b_z[a-z0-9_]{6,}",
        ))
        .expect("layout regex")
    })
}

/// Replaces every product message and product layout ([`layout_re`]) in `text` (already
/// normalised) by `fill` characters, so that no window spanning one can match across KB
/// and paste.
fn mask(text: &str, messages: &AhoCorasick, fill: char) -> String {
    let mut cuts: Vec<(usize, usize)> = messages
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .chain(layout_re().find_iter(text).map(|m| (m.start(), m.end())))
        .collect();
    cuts.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b) in cuts {
        let a = a.max(last);
        if a >= b {
            continue;
        }
        out.push_str(&text[last..a]);
        out.extend(std::iter::repeat_n(fill, text[a..b].chars().count()));
        last = b;
    }
    out.push_str(&text[last..]);
    out
}

/// A span needs this many letters to be a paste's words (a table border of dashes is not).
const MIN_SPAN_LETTERS: usize = 20;

/// Finds KB text that copies paste-specific text of `pastes`. `generic` is the
/// primary-source corpus (anything in it is not paste-specific); `messages` are exact
/// product messages quoted from primary sources, masked out of both sides before spans
/// are compared (quoting a product's own message is not copying a paste).
pub fn find_copies(
    kb: &[KbText],
    pastes: &[Paste],
    generic: &str,
    messages: &[String],
) -> Vec<Copied> {
    let msgs: Vec<String> = messages
        .iter()
        .map(|m| normalise(m))
        .filter(|m| m.chars().count() >= 16)
        .collect();
    // A window inside a product message (a partial quote) is not paste-specific either.
    let generic = format!("{}\n{}", normalise(generic), msgs.join("\n"));
    let messages = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&msgs)
        .expect("product messages automaton");
    let norm: Vec<String> = pastes
        .iter()
        .map(|p| mask(&normalise(&p.text), &messages, '\u{1}'))
        .collect();

    // Windows of the pastes -> the pastes holding them.
    let mut win: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in norm.iter().enumerate() {
        for (a, b) in windows(n) {
            let v = win.entry(&n[a..b]).or_default();
            if v.last() != Some(&i) {
                v.push(i);
            }
        }
    }
    let threads = |idx: &[usize]| -> usize {
        idx.iter()
            .map(|&i| pastes[i].source.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    };

    // Tokens of the pastes -> the pastes holding them.
    let mut tok: BTreeMap<(CopyKind, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in pastes.iter().enumerate() {
        for t in tokens(&p.text) {
            tok.entry(t).or_default().push(i);
        }
    }
    tok.retain(|(_, t), idx| {
        threads(idx) < 2
            && !generic.contains(t.as_str())
            && !msgs.iter().any(|m| m.contains(t.as_str()))
    });

    let mut out = BTreeSet::new();
    for k in kb {
        let plain = normalise(&k.text);
        let text = mask(&plain, &messages, '\u{2}');
        // Spans: runs of consecutive windows found in one paste.
        let mut best: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        let ws = windows(&text);
        let mut run: Option<(usize, usize, usize)> = None; // (paste, start, end)
        for &(a, b) in &ws {
            let w = &text[a..b];
            let hit = win
                .get(w)
                .filter(|idx| threads(idx) < 2 && !generic.contains(w))
                .and_then(|idx| idx.first().copied());
            run = match (run, hit) {
                (Some((p, s, _)), Some(h)) if h == p => Some((p, s, b)),
                (prev, h) => {
                    if let Some((p, s, e)) = prev {
                        let cur = best.entry(p).or_insert((s, e));
                        if e - s > cur.1 - cur.0 {
                            *cur = (s, e);
                        }
                    }
                    h.map(|h| (h, a, b))
                }
            };
        }
        if let Some((p, s, e)) = run {
            let cur = best.entry(p).or_insert((s, e));
            if e - s > cur.1 - cur.0 {
                *cur = (s, e);
            }
        }
        for (p, (s, e)) in best {
            if text[s..e].chars().filter(char::is_ascii_alphabetic).count() < MIN_SPAN_LETTERS {
                continue;
            }
            out.insert(Copied {
                file: k.file.clone(),
                what: k.what.clone(),
                case_id: pastes[p].id.clone(),
                kind: CopyKind::Span,
                text: text[s..e].chars().take(120).collect(),
            });
        }
        // Tokens.
        for ((kind, t), idx) in &tok {
            if contains_token(&plain, t) {
                out.insert(Copied {
                    file: k.file.clone(),
                    what: k.what.clone(),
                    case_id: pastes[idx[0]].id.clone(),
                    kind: *kind,
                    text: t.clone(),
                });
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paste(id: &str, source: &str, text: &str) -> Paste {
        Paste {
            id: id.into(),
            source: source.into(),
            text: text.into(),
        }
    }

    fn kb(text: &str) -> Vec<KbText> {
        vec![KbText {
            file: "kb/examples/x/1.txt".into(),
            what: "example".into(),
            text: text.into(),
        }]
    }

    #[test]
    fn product_messages_table_rows_have_a_product_and_a_source() {
        let mut lines = PRODUCT_MESSAGES_TSV.lines();
        assert_eq!(lines.next(), Some("message\tproduct\tsource"));
        for (i, l) in lines.enumerate() {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "row {}: {l}", i + 2);
            assert!(
                cols[0].chars().count() >= 16,
                "row {}: message too short",
                i + 2
            );
            assert!(
                cols[2].starts_with("https://"),
                "row {}: {}",
                i + 2,
                cols[2]
            );
        }
    }

    #[test]
    fn a_product_message_is_not_a_copy_but_its_context_is() {
        let msg = "this is a product message of more than sixty characters, quoted from its source";
        let kb_text = kb;
        let kb = kb_text(&format!(
            "my own words before it. {msg} and my own words after it"
        ));
        let p = [paste(
            "p",
            "s",
            &format!("the user's own context line. {msg} their other text"),
        )];
        assert!(find_copies(&kb, &p, "", &[msg.to_string()]).is_empty());
        assert_eq!(find_copies(&kb, &p, "", &[]).len(), 1);
        let copied = "the user's own context line, copied with the message into the kb";
        let kb2 = kb_text(&format!("{copied}. {msg}"));
        let p2 = [paste("p", "s", &format!("{copied}. {msg}"))];
        assert_eq!(find_copies(&kb2, &p2, "", &[msg.to_string()]).len(), 1);
    }

    #[test]
    fn product_layout_dashes_and_addresses_are_not_copies() {
        // a package's own files, a Go source location, a mangled symbol: the product's
        let layout = "file \"/usr/local/lib/python3.11/dist-packages/vllm/model_executor/layers/linear.py\", line 1201 process_linux.go:449 _zn3c104cuda9setdeviceei";
        let p = paste(
            "e1",
            "t1",
            &format!("{layout} in the user's own words that follow"),
        );
        assert!(find_copies(&kb(layout), &[p], "", &[]).is_empty());
        // a table border is not a paste's words
        let dashes = "-".repeat(90);
        let p = paste("e2", "t2", &format!("| gpu |\n{dashes}\n"));
        assert!(find_copies(&kb(&dashes), &[p], "", &[]).is_empty());
        // an IPv4 address is not a release; a release still is, unless a primary source has it
        let p = paste("e3", "t3", "connect to 127.0.0.1 failed, NCCL 2.19.3");
        let got = find_copies(
            &kb("bootstrap 127.0.0.1 NCCL 2.19.3"),
            std::slice::from_ref(&p),
            "",
            &[],
        );
        assert_eq!(
            got.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
            vec!["2.19.3"]
        );
        assert!(find_copies(&kb("NCCL 2.19.3"), &[p], "2.19.3\n", &[]).is_empty());
        // the user's own words are still caught
        let own =
            "my cluster node gpu-rack-17 started failing after the firmware update last tuesday";
        let p = paste("e4", "t4", own);
        assert_eq!(find_copies(&kb(own), &[p], "", &[]).len(), 1);
    }

    #[test]
    fn releases_table_rows_have_a_product_a_version_and_a_source() {
        let mut lines = RELEASES_TSV.lines();
        assert_eq!(lines.next(), Some("product\tversion\tsource"));
        for l in lines {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "{l}");
            assert!(version_re().is_match(cols[1]), "{l}");
            assert!(cols[2].starts_with("https://"), "{l}");
        }
    }

    #[test]
    fn normalise_collapses_whitespace_and_case() {
        assert_eq!(normalise("  A\n\t b  C "), "a b c");
    }

    #[test]
    fn tokens_find_paths_versions_hosts() {
        let t = tokens(
            "trainer-node7:1234:99 [0] NCCL WARN x\nbob@gpubox:~$ ls /home/bob/proj/run.py\n\
             driver 555.42.06 on 6.8.0-45-generic, see /usr/lib/x86_64-linux-gnu/libcuda.so.1",
        );
        assert!(t.contains(&(CopyKind::Host, "trainer-node7".into())));
        assert!(t.contains(&(CopyKind::Host, "gpubox".into())));
        assert!(t.contains(&(CopyKind::Path, "/home/bob/proj/run.py".into())));
        assert!(t.contains(&(CopyKind::Version, "555.42.06".into())));
        assert!(t.contains(&(CopyKind::Version, "6.8.0-45-generic".into())));
        assert!(!t.iter().any(|(_, s)| s.starts_with("/usr/")), "{t:?}");
    }

    #[test]
    fn installer_default_host_names_are_not_the_pastes() {
        let t = tokens("nvidia@ubuntu:~$ nvidia-smi\nroot@localhost:~# ls\nbob@gpubox:~$ ls");
        assert!(
            !t.iter().any(|(k, h)| *k == CopyKind::Host && h == "ubuntu"),
            "{t:?}"
        );
        assert!(
            !t.iter()
                .any(|(k, h)| *k == CopyKind::Host && h == "localhost"),
            "{t:?}"
        );
        assert!(t.contains(&(CopyKind::Host, "gpubox".into())));
    }

    #[test]
    fn token_boundaries() {
        assert!(contains_token("at /home/bob/x.py.", "/home/bob/x.py"));
        assert!(!contains_token("at /home/bob/x.pyc", "/home/bob/x.py"));
        assert!(!contains_token("v 12.555.42.06", "555.42.06"));
        assert!(contains_token("(555.42.06)", "555.42.06"));
    }

    #[test]
    fn regex_text_undoes_escapes() {
        assert_eq!(regex_as_text(r"libfoo\.so\.\d+"), "libfoo.so. +");
    }
}
