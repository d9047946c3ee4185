//! `cli` parses arguments, calls the libraries, renders and picks exit codes
//! (issue 24): it never builds the facts a machine is made of. Every struct of
//! `gpukb-facts`, every variant of its enums that carries data, and every
//! constructor of its that returns `Self` (`Observed::failed`) is read from
//! the facts crate's source; none may be built anywhere in `cli/src` (a
//! pattern that matches one, to read it, is fine). A machine described by
//! flags goes through `gpukb_facts::described`, `--once` through
//! `gpukb_monitor::once`. Read from the source text, so no build is needed.
#![allow(clippy::disallowed_methods)] // reads the workspace's own source files

use source_text::{code_only, rust_files, workspace_root};
use std::collections::BTreeSet;

mod source_text;

/// The facts crate's types cli may build, as they are not facts about the
/// machine: where a value was read from (`Source::File { path }`: the CLI says
/// so of a file the user named and it read itself, such as a probe report),
/// and what the user said of a machine, word for word (`Described`: the flags
/// as given, which `gpukb_facts::described` reads into facts).
const NOT_FACTS: [&str; 2] = ["Source", "Described"];

/// How a facts type is built, by the text that builds it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Builder {
    /// `PlannerFacts`, `DriverFact::Known`, `Observed::failed`.
    path: String,
    /// The bracket that follows the path when it is built: `{` or `(`.
    open: char,
    /// A function: every call builds one (no pattern names a function).
    call: bool,
}

fn ident_at(code: &str, at: usize) -> String {
    code[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first character after `at` that is not white space, and its offset.
fn next_char(code: &str, at: usize) -> Option<(usize, char)> {
    code[at..]
        .char_indices()
        .find(|(_, c)| !c.is_whitespace())
        .map(|(i, c)| (at + i, c))
}

/// The offset of the bracket closing the one at `open` (`{`, `(`, `[`).
fn close_of(code: &str, open: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Each `pub <keyword> NAME` of the code: the name and the offset after it.
fn declared<'a>(code: &'a str, keyword: &'a str) -> impl Iterator<Item = (String, usize)> + 'a {
    code.match_indices(keyword).filter_map(move |(at, k)| {
        let name = ident_at(code, at + k.len());
        (!name.is_empty()).then(|| (name.clone(), at + k.len() + name.len()))
    })
}

/// The variants of the enum whose body opens at `open` that carry data, with
/// their bracket (attributes and unit variants skipped).
fn data_variants(code: &str, open: usize) -> Vec<(String, char)> {
    let close = close_of(code, open);
    let mut out = Vec::new();
    let mut i = open + 1;
    while let Some((at, c)) = next_char(code, i).filter(|(at, _)| *at < close) {
        if c == '#' {
            // an attribute: `#[...]`
            i = close_of(code, at + 1) + 1;
            continue;
        }
        let name = ident_at(code, at);
        if name.is_empty() {
            i = at + c.len_utf8();
            continue;
        }
        let after = at + name.len();
        let mut end = after;
        if let Some((b, bracket @ ('{' | '('))) = next_char(code, after) {
            out.push((name, bracket));
            end = close_of(code, b) + 1;
        }
        // to the comma that ends this variant (a discriminant may follow)
        i = code[end..close].find(',').map_or(close, |c| end + c + 1);
    }
    out
}

/// The `pub fn`s returning `Self` of each `impl` block: `(type, function)`.
fn self_constructors(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("impl") {
        let before = code[..at].chars().next_back();
        let after = code[at + 4..].chars().next();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            || !after.is_some_and(|c| c.is_whitespace() || c == '<')
        {
            continue;
        }
        let Some(open) = code[at..].find('{').map(|o| at + o) else {
            continue;
        };
        let head = &code[at + 4..open];
        let head = head.rsplit(" for ").next().unwrap_or(head);
        // skip the impl's own generics (`impl<T> Observed<T>`)
        let head = match head.trim_start().strip_prefix('<') {
            Some(rest) => rest.split_once('>').map_or("", |(_, t)| t),
            None => head,
        };
        let ty = ident_at(head.trim_start(), 0);
        let body = &code[open..close_of(code, open)];
        for (name, after) in declared(body, "pub fn ") {
            let sig_end = body[after..]
                .find(['{', ';'])
                .map_or(body.len(), |e| after + e);
            if body[after..sig_end].trim_end().ends_with("-> Self") {
                out.push((ty.clone(), name));
            }
        }
    }
    out
}

/// Everything the facts crate's `code` lets be built (provenance aside).
fn builders_in(code: &str, out: &mut BTreeSet<Builder>) {
    let mut add = |path: String, open: char, call: bool| {
        if !NOT_FACTS.contains(&path.split("::").next().unwrap_or_default()) {
            out.insert(Builder { path, open, call });
        }
    };
    for (name, after) in declared(code, "pub struct ") {
        match next_char(code, after) {
            Some((_, '(')) => add(name, '(', false),
            Some((_, ';')) | None => {}
            Some(_) => add(name, '{', false),
        }
    }
    for (name, after) in declared(code, "pub enum ") {
        let Some(open) = code[after..].find('{').map(|o| after + o) else {
            continue;
        };
        for (variant, bracket) in data_variants(code, open) {
            add(format!("{name}::{variant}"), bracket, false);
        }
    }
    for (ty, f) in self_constructors(code) {
        add(format!("{ty}::{f}"), '(', true);
    }
}

/// True when what surrounds the bracketed text at `open..=close` makes it a
/// pattern (a match arm, `let`, `if let`, `matches!`), not an expression.
fn is_pattern(code: &str, before: &str, open: usize, close: usize) -> bool {
    let inner = code[open + 1..close].trim();
    if inner.ends_with("..")
        || !inner.is_empty()
            && inner
                .chars()
                .all(|c| matches!(c, '_' | '.' | ',') || c.is_whitespace())
    {
        return true;
    }
    let prior = before.trim_end();
    if prior.ends_with("let") {
        return true;
    }
    let rest = code[close + 1..].trim_start_matches(|c: char| c.is_whitespace() || c == ')');
    rest.starts_with("=>")
        || (rest.starts_with('|') && !rest.starts_with("||"))
        || (rest.starts_with('=') && !rest.starts_with("=="))
        || rest.starts_with("if ")
}

/// True when the words before a type name make it a declaration or a type,
/// not a value: `impl X for T {`, `-> T {`, `struct T {`.
fn is_declaration(before: &str) -> bool {
    let prior = before.trim_end();
    prior.ends_with("->")
        || [
            "impl", "for", "struct", "enum", "trait", "type", "mod", "fn", "dyn",
        ]
        .iter()
        .any(|k| {
            prior.ends_with(k)
                && !prior[..prior.len() - k.len()]
                    .ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
}

/// The facts `code` builds: `(line, path)` of each.
fn constructions(code: &str, builders: &BTreeSet<Builder>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for b in builders {
        for (at, _) in code.match_indices(b.path.as_str()) {
            let end = at + b.path.len();
            let whole_word_before = code[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let whole_word_after = code[end..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            if !whole_word_before || !whole_word_after {
                continue;
            }
            let Some((open, c)) = next_char(code, end) else {
                continue;
            };
            if c != b.open {
                continue;
            }
            // the path may be written qualified: `gpukb_facts::plan::PlannerFacts`
            let before =
                code[..at].trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            if !b.call
                && (is_declaration(before) || is_pattern(code, before, open, close_of(code, open)))
            {
                continue;
            }
            out.push((code[..at].matches('\n').count() + 1, b.path.clone()));
        }
    }
    out.sort();
    out
}

/// What the facts crate (`agent/facts/src`) lets be built.
fn facts_builders() -> BTreeSet<Builder> {
    let mut files = Vec::new();
    rust_files(&workspace_root().join("agent/facts/src"), &mut files);
    let mut builders = BTreeSet::new();
    for f in files {
        builders_in(
            &code_only(&std::fs::read_to_string(f).unwrap()),
            &mut builders,
        );
    }
    builders
}

#[test]
fn cli_builds_no_facts() {
    let builders = facts_builders();
    let paths: BTreeSet<&str> = builders.iter().map(|b| b.path.as_str()).collect();
    // The reader sees what it is meant to forbid.
    for expected in [
        "PlannerFacts",
        "GpuFact",
        "JetsonFact",
        "DriverFact::Known",
        "DriverFact::Unknown",
        "Fingerprint",
        "NvmlFacts",
        "DriverFacts",
        "Observed::Found",
        "Observed::failed",
        "Observed::unobservable",
    ] {
        assert!(
            paths.contains(expected),
            "{expected} not read from gpukb-facts: {paths:?}"
        );
    }
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("Source") || p.starts_with("Described")),
        "{paths:?}"
    );
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("cli/src"), &mut files);
    files.sort();
    assert!(files.len() > 10, "found only {files:?}");
    let mut found = Vec::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (line, path) in constructions(&code, &builders) {
            found.push(format!(
                "{}:{line}: builds {path}",
                f.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "cli builds domain facts (move the conversion into gpukb-facts or the monitor):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reader_tells_building_from_matching() {
    let facts = "
        pub struct MachineFacts { pub label: String }
        pub struct Unit;
        pub enum DriverFact { Known { version: u32 }, #[doc = \"x\"] Absent(String), Unknown(String) }
        pub enum Source { File { path: String } }
        pub enum Observed<T> { Found { value: T }, Failed { error: String } }
        impl<T> Observed<T> {
            pub fn failed(error: impl ToString) -> Self { todo!() }
            pub fn value(&self) -> Option<&T> { None }
        }";
    let mut builders = BTreeSet::new();
    builders_in(&code_only(facts), &mut builders);
    let paths: Vec<&str> = builders.iter().map(|b| b.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "DriverFact::Absent",
            "DriverFact::Known",
            "DriverFact::Unknown",
            "MachineFacts",
            "Observed::Failed",
            "Observed::Found",
            "Observed::failed",
        ]
    );
    let cli = "
        impl Show for MachineFacts {}
        fn f() -> MachineFacts { todo!() }
        fn g(m: &MachineFacts) -> bool {
            let known = matches!(m.driver, DriverFact::Known { .. });
            if let Some(Observed::Found { value }) = x.first() {}
            match d { DriverFact::Unknown(why) | DriverFact::Absent(why) => 1, _ => 0 };
            let Observed::Failed { error } = y else { return false };
            let m = gpukb_facts::plan::MachineFacts { label: s };
            let d = DriverFact::Unknown(\"MachineFacts { label }\".into());
            // MachineFacts { label: x }
            let o = Observed::failed(e);
            let s = Source::File { path };
            true
        }";
    let found = constructions(&code_only(cli), &builders);
    let found: Vec<String> = found.iter().map(|(l, p)| format!("{l}:{p}")).collect();
    assert_eq!(
        found,
        [
            "9:MachineFacts",
            "10:DriverFact::Unknown",
            "12:Observed::failed"
        ]
    );
}
