//! No cycle of files importing each other (issue 24): inside every crate of the
//! workspace, the files under `src/` and the `crate::`/`super::` paths their code
//! names (comments and string literals aside) form a graph with no cycle. A file
//! may name its own ancestors (a module using its parent's types); any other
//! pair that names each other, directly or around a loop, fails here with the
//! loop printed. Read from the source text, so no build is needed.
#![allow(clippy::disallowed_methods)] // reads the workspace's own source files

use source_text::{code_only, crate_sources, rust_files, workspace_root};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod source_text;

/// A module path inside one crate (`["diagnose", "checks"]`); the root is empty.
type ModPath = Vec<String>;

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs`/`main.rs` are the root.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    } else if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The module paths a file's code names through `crate::` or `super::`, each as
/// written (`crate::a::b::C` gives `[a, b, C]` from the root; `super::x` from the
/// parent), with `crate::{a, b::c}` groups expanded.
fn named_paths(code: &str, me: &ModPath, is_mod_file: bool) -> Vec<ModPath> {
    let ident = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| {
                p.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|p| !p.is_empty())
            .collect()
    };
    let mut out = Vec::new();
    for (kw, base) in [
        ("crate::", Vec::new()),
        ("super::", {
            // `super` of a file module is its parent; of `x/mod.rs` also x's parent.
            let mut p = me.clone();
            let _ = is_mod_file;
            p.pop();
            p
        }),
    ] {
        let mut from = 0;
        while let Some(at) = code[from..].find(kw) {
            let start = from + at;
            from = start + kw.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // `$crate::`, `a::super::`
            }
            let rest = &code[from..];
            let mut prefixes = Vec::new();
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    prefixes.push(ident(item));
                }
            } else {
                prefixes.push(ident(rest));
            }
            for p in prefixes {
                let mut full = base.clone();
                full.extend(p);
                out.push(full);
            }
        }
    }
    out
}

/// The strongly connected components with more than one file (Tarjan).
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct T<'a> {
        g: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a ModPath) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in &t.g[v] {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The file-import graph of one crate: file module -> the other files it names,
/// leaving out its own ancestors.
fn graph_of(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mods: BTreeMap<ModPath, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for (m, f) in &mods {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let is_mod_file = f.file_name().is_some_and(|n| n == "mod.rs");
        let mut to = BTreeSet::new();
        for p in named_paths(&code, m, is_mod_file) {
            // The longest prefix of the path that is a file of this crate.
            let Some(target) = (1..=p.len())
                .rev()
                .map(|i| p[..i].to_vec())
                .find(|k| mods.contains_key(k))
            else {
                continue;
            };
            let ancestor = m.len() >= target.len() && m[..target.len()] == target[..];
            if !ancestor {
                to.insert(target);
            }
        }
        graph.insert(m.clone(), to);
    }
    graph
}

#[test]
fn no_files_of_a_crate_import_each_other_around_a_loop() {
    let root = workspace_root();
    let mut srcs = Vec::new();
    crate_sources(&root, &mut srcs);
    assert!(srcs.len() >= 9, "found only {srcs:?}");
    let mut found = Vec::new();
    let mut edges = 0;
    for src in &srcs {
        let g = graph_of(src);
        edges += g.values().map(BTreeSet::len).sum::<usize>();
        for c in cycles(&g) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            found.push(format!(
                "{}: {}",
                src.strip_prefix(&root).unwrap().display(),
                names.join(" <-> ")
            ));
        }
    }
    // The graph is not empty: the reader sees the imports it is meant to check.
    assert!(edges > 100, "only {edges} file imports read");
    assert!(
        found.is_empty(),
        "files that import each other around a loop:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reader_finds_a_loop_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a; mod b;").unwrap();
    // a names b; b names a::c; a::c names b (a loop of two) and its parent a (allowed);
    // paths in comments and strings are not imports (else b <-> a would be a loop too).
    std::fs::write(src.join("a/mod.rs"), "mod c; use crate::b::B;").unwrap();
    std::fs::write(
        src.join("a/c.rs"),
        "use super::A; use crate::b::B2; const S: &str = \"crate::a\";",
    )
    .unwrap();
    std::fs::write(
        src.join("b.rs"),
        "use crate::{x, a::c::C}; // crate::a::A\n",
    )
    .unwrap();
    let g = graph_of(&src);
    let c = cycles(&g);
    assert_eq!(c.len(), 1, "{g:?}");
    let mut names: Vec<String> = c[0].iter().map(|m| m.join("::")).collect();
    names.sort();
    assert_eq!(names, ["a::c", "b"]);
}
