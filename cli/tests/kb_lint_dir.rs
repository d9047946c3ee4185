//! `gpukb kb lint DIR` (issue 13 §6): a knowledge-base directory is checked by the
//! build's own compile code without rebuilding the binary. The repository's `kb/` is clean;
//! a copy with planted problems (a bad regex, an unknown category or check…) names each
//! one (file, entry, message) and exits 1; a missing directory exits 2 with one line;
//! `--eval` keeps its own directory argument.
#![allow(clippy::disallowed_methods)] // builds a KB copy and runs the binary

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_kb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kb")
}

/// (exit status, stdout, stderr) of `gpukb ARGS`.
fn gpukb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A copy of the repository's KB data (not its sources) under `dir`.
fn copy_kb(dir: &Path) {
    for d in ["entries", "examples", "tables"] {
        copy_dir(&repo_kb().join(d), &dir.join(d));
    }
    std::fs::copy(repo_kb().join("categories.tsv"), dir.join("categories.tsv")).unwrap();
}

/// A well-formed entry `id`, with `extra` lines replacing the parts a test breaks.
fn entry(id: &str, category: &str, signature: &str, sources: bool) -> String {
    let mut s = format!(
        "id = \"{id}\"\ncategory = \"{category}\"\nlayer = \"driver\"\ntitle = \"Planted {id}\"\nsummary = \"A planted entry.\"\n\n[[signatures]]\n{signature}\n\n[[fixes]]\nplatform = \"driver\"\ntitle = \"Reinstall\"\nsteps = [\"sudo apt install --reinstall nvidia-driver\"]\n"
    );
    if sources {
        s.push_str("\n[[sources]]\nurl = \"https://docs.nvidia.com/deploy/xid-errors/\"\ntitle = \"Xid errors\"\n");
    }
    s
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn the_repository_kb_dir_is_clean() {
    let kb = repo_kb();
    let (code, out, err) = gpukb(&["kb", "lint", kb.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.ends_with(", 0 problem(s)"), "{out}");
    // Every entry on disk compiled (none left out).
    let on_disk = std::fs::read_dir(kb.join("entries"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "toml"))
        })
        .count();
    assert!(
        last.starts_with(&format!("{on_disk} entries of {on_disk} on disk")),
        "{last}"
    );
}

/// The lines of a planted table row: `categories.tsv` and `tables/xid.csv`.
struct PlantedRows {
    cats_line: usize,
    xid_line: usize,
}

/// Plants one entry per kind of entry problem in the KB copy `kb`.
fn plant_entries(kb: &Path) {
    let sig = "literal = \"planted failure text for the lint test\"";
    let example = "NVRM: planted failure text for the lint test\n";
    // A regex that does not compile (fatal: the build would fail).
    write(
        kb,
        "entries/planted-bad-regex.toml",
        &entry(
            "planted-bad-regex",
            "driver_not_installed",
            "regex = '(unclosed'",
            true,
        ),
    );
    // A category that categories.tsv lacks.
    write(
        kb,
        "entries/planted-unknown-category.toml",
        &entry("planted-unknown-category", "no_such_category", sig, true),
    );
    write(kb, "examples/planted-unknown-category/1.txt", example);
    // An entry without [[sources]].
    write(
        kb,
        "entries/planted-no-source.toml",
        &entry("planted-no-source", "driver_not_installed", sig, false),
    );
    write(kb, "examples/planted-no-source/1.txt", example);
    // An example whose `# source:` line is not a URL.
    write(
        kb,
        "entries/planted-bad-example-source.toml",
        &entry(
            "planted-bad-example-source",
            "driver_not_installed",
            sig,
            true,
        ),
    );
    write(
        kb,
        "examples/planted-bad-example-source/1.txt",
        &format!("# source: a forum thread\n{example}"),
    );
    // A condition that names no doctor check (fatal: the build would fail).
    write(
        kb,
        "entries/planted-unknown-check.toml",
        &format!(
            "{}\n[[conditions]]\nwhen = \"no_such_check\"\n",
            entry("planted-unknown-check", "driver_not_installed", sig, true)
        ),
    );
    write(kb, "examples/planted-unknown-check/1.txt", example);
    // A second file with an existing entry's id (a copied entry left unrenamed).
    let first =
        std::fs::read_to_string(repo_kb().join("entries/bce-input-outside-zero-one.toml")).unwrap();
    write(kb, "entries/bce-input-copy.toml", &first);
}

/// Plants a `categories.tsv` row with too few fields and a code-table row without a source.
fn plant_rows(kb: &Path) -> PlantedRows {
    let mut cats = std::fs::read_to_string(kb.join("categories.tsv")).unwrap();
    cats.push_str("planted_half_row\tdriver\n");
    write(kb, "categories.tsv", &cats);
    let mut xid = std::fs::read_to_string(kb.join("tables/xid.csv")).unwrap();
    let header = xid.lines().next().unwrap().to_string();
    let fields = header.split(',').count();
    let mut row = vec![String::new(); fields];
    row[0] = "9999".into();
    xid.push_str(&format!("{}\n", row.join(",")));
    write(kb, "tables/xid.csv", &xid);
    PlantedRows {
        cats_line: cats.lines().count(),
        xid_line: xid.lines().count(),
    }
}

/// The start of the line each planted problem must have in the lint of `label`.
fn expected_problems(label: &str, rows: &PlantedRows) -> Vec<String> {
    let PlantedRows {
        cats_line,
        xid_line,
    } = rows;
    vec![
        format!("{label}/entries/planted-bad-regex.toml: planted-bad-regex: signature #1 regex '(unclosed' does not compile"),
        format!("{label}/entries/planted-unknown-category.toml: planted-unknown-category: category \"no_such_category\" is not in {label}/categories.tsv"),
        format!("{label}/entries/planted-no-source.toml: planted-no-source: no [[sources]]"),
        format!("{label}/examples/planted-bad-example-source/1.txt: planted-bad-example-source: \"# source: a forum thread\" is not one http(s) URL"),
        format!("{label}/entries/planted-unknown-check.toml: planted-unknown-check: condition when = \"no_such_check\" is not a doctor check"),
        format!("{label}/entries/bce-input-copy.toml: bce-input-copy: id \"bce-input-outside-zero-one\" does not equal the file stem \"bce-input-copy\""),
        format!("{label}/categories.tsv:{cats_line}: expected 4 non-empty tab-separated fields"),
        format!("{label}/tables/xid.csv:{xid_line}: empty source"),
    ]
}

/// `--eval` keeps its own directory: a paste copying a planted example is reported
/// against the KB directory, not read as one.
fn assert_eval_keeps_its_dir(tmp: &Path, kb: &Path) {
    let label = kb.to_str().unwrap();
    let eval = tmp.join("eval");
    let paste = "zz planted failure text for the lint test, copied whole from a paste of one machine: /srv/models/zz-private-run/ckpt";
    write(
        kb,
        "examples/planted-no-source/2.txt",
        &format!("# source: https://example.org/t\n{paste}\n"),
    );
    write(
        &eval,
        "cases.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"id": "p-1", "source": "https://example.org/p", "error": paste, "root_cause": "driver_not_installed"})
        ),
    );
    let (code, out, err) = gpukb(&["kb", "lint", label, "--eval", eval.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.lines().any(|l| l.starts_with(&format!(
            "{label}/examples/planted-no-source/2.txt: planted-no-source: example copies"
        )) && l.contains("p-1")),
        "{out}"
    );
}

#[test]
fn planted_problems_are_each_named_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let kb = tmp.path().join("kbcopy");
    copy_kb(&kb);
    plant_entries(&kb);
    let rows = plant_rows(&kb);

    let label = kb.to_str().unwrap();
    let (code, out, err) = gpukb(&["kb", "lint", label]);
    assert_eq!(code, 1, "{out}{err}");
    let expect = expected_problems(label, &rows);
    for e in &expect {
        assert!(
            out.lines().any(|l| l.starts_with(e.as_str())),
            "no line starting {e:?} in:\n{out}"
        );
    }
    // Entries with fatal problems are left out, as the build (lenient) leaves them out.
    let on_disk = std::fs::read_dir(kb.join("entries")).unwrap().count();
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("{} entries of {on_disk} on disk", on_disk - 3)),
        "{last}"
    );
    // Nothing else: each planted problem once, and the clean copy has none.
    let problems: Vec<&str> = out.lines().filter(|l| l.starts_with(label)).collect();
    assert!(problems.len() >= expect.len(), "{out}");
    assert!(
        problems.iter().all(|l| l.contains("planted")
            || l.contains("bce-input-copy")
            || l.contains(&format!("xid.csv:{}:", rows.xid_line))
            || l.contains(&format!("categories.tsv:{}:", rows.cats_line))),
        "a problem outside the plants:\n{out}"
    );

    assert_eval_keeps_its_dir(tmp.path(), &kb);
}

#[test]
fn an_unreadable_dir_exits_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-kb");
    let (code, out, err) = gpukb(&["kb", "lint", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no-such-kb") && err.contains("entries"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    // A directory that is not a KB (no entries/) is the same.
    let (code, _, err) = gpukb(&["kb", "lint", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}
