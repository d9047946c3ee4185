//! Compiles the knowledge base at build time with `gpukb-kb-compile` (the same reading and
//! checks as `gpukb kb lint DIR`): reads `kb/entries/*.toml`, `kb/examples/`,
//! `kb/tables/*.csv` and `kb/categories.tsv`, fails the build on fatal problems with a
//! precise message, and writes into `OUT_DIR` a SQLite database, a one-segment tantivy
//! index and the search tables (`matcher_tables.rs`), all embedded in the binary.
//!
//! Set `GPUKB_KB_LENIENT=1` to turn fatal problems into warnings (the bad entry or row is
//! left out and reported by `gpukb kb lint`) while entries are being written.
// Build scripts read the repository's own data files, not machine state.
#![allow(clippy::disallowed_methods)]

// The check names, from the file the doctor's `CheckId` is defined in.
#[allow(dead_code)]
#[path = "doctor/src/checks/id.rs"]
pub mod check_id;

// The table the doctor classifies printed commands with: every fix step's effects are
// classified here, once, so a search compiles none of its regexes.
#[allow(dead_code, unreachable_pub)]
#[path = "doctor/src/effect.rs"]
mod effect;

// How search fills a step's machine placeholders: the filled form of every step that has
// one is classified here too.
#[allow(dead_code, unreachable_pub)]
#[path = "src/fill_step.rs"]
mod fill_step;

use std::fmt::Write as _;
use std::path::PathBuf;

type BoxErr = Box<dyn std::error::Error>;

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
        "doctor/src/checks/id.rs",
        "doctor/src/effect.rs",
        "src/fill_step.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=GPUKB_KB_LENIENT");

    let checks: Vec<&str> = check_id::CheckId::ALL.iter().map(|c| c.name()).collect();
    let kb = gpukb_kb_compile::compile(&root, "kb", &checks)?;
    let fatal: Vec<String> = kb
        .fatal()
        .map(|i| format!("{}: {}", i.file, i.message))
        .collect();
    if !fatal.is_empty() {
        if !lenient {
            return Err(format!(
                "invalid knowledge-base data ({} problem(s); set GPUKB_KB_LENIENT=1 to build without the bad entries):\n  {}",
                fatal.len(),
                fatal.join("\n  ")
            )
            .into());
        }
        for f in &fatal {
            println!("cargo:warning=gpukb kb (left out): {f}");
        }
    }
    kb.write_sqlite(&out.join("kb.sqlite"))?;
    write_index(&kb, &out)?;
    // The tables search scans with, as a static: a search then builds none of them.
    let tables = gpukb_kb_compile::matcher::tables_in_file(&out.join("kb.sqlite"))?;
    std::fs::write(
        out.join("matcher_tables.rs"),
        format!(
            "/// The search tables of the embedded knowledge base.\npub(crate) static TABLES: Tables = {};\n",
            gpukb_kb_compile::matcher::to_rust(&tables)
        ),
    )?;
    write_step_effects(&kb, &out)?;
    write_vocabulary(&kb, &out)?;
    Ok(())
}

/// Writes `OUT_DIR/vocabulary.rs`: every word (a run of 4 to 40 ASCII letters, lowercased)
/// of the entries' TOML and their examples, sorted, as one text and the offset of each word
/// in it (offsets, not one pointer per word for the loader to relocate at start-up).
fn write_vocabulary(kb: &gpukb_kb_compile::Compiled, out: &std::path::Path) -> Result<(), BoxErr> {
    let mut words = std::collections::BTreeSet::new();
    let mut add = |text: &str| {
        for w in text.split(|c: char| !c.is_ascii_alphabetic()) {
            if (4..=40).contains(&w.len()) {
                words.insert(w.to_ascii_lowercase());
            }
        }
    };
    for e in &kb.entries {
        add(&e.toml);
        for (_, text) in &e.examples {
            add(text);
        }
    }
    let mut text = String::new();
    let mut at: Vec<u32> = Vec::with_capacity(words.len() + 1);
    for w in &words {
        at.push(u32::try_from(text.len())?);
        text.push_str(w);
    }
    at.push(u32::try_from(text.len())?);
    std::fs::write(
        out.join("vocabulary.rs"),
        format!(
            "/// Every word of the embedded knowledge base, sorted, one after another.\npub(crate) static WORD_TEXT: &str = {text:?};\n/// Where each word of `WORD_TEXT` starts, and its end.\npub(crate) static WORD_AT: &[u32] = &{at:?};\n"
        ),
    )?;
    Ok(())
}

/// Writes `OUT_DIR/step_effects.rs`: every fix step of the knowledge base, sorted, with
/// its effects (`effect::effects_or_worst`, each as its index in `Effect::ALL`). Rows are
/// offsets into one text and one byte string, not pointers, so the loader has nothing to
/// relocate in them when the program starts.
fn write_step_effects(
    kb: &gpukb_kb_compile::Compiled,
    out: &std::path::Path,
) -> Result<(), BoxErr> {
    let steps: std::collections::BTreeSet<&str> = kb
        .entries
        .iter()
        .flat_map(|e| e.entry.fixes.iter())
        .flat_map(|f| f.steps.iter().map(String::as_str))
        .collect();
    let mut text = String::new();
    let mut codes: Vec<u8> = Vec::new();
    let mut row = |step: &str, effects: Vec<effect::Effect>| -> Result<String, BoxErr> {
        let at = u32::try_from(text.len())?;
        text.push_str(step);
        let c_at = u32::try_from(codes.len())?;
        codes.extend(effects.into_iter().map(|e| e as u8));
        Ok(format!(
            "    [{at}, {}, {c_at}, {}],\n",
            u32::try_from(step.len())?,
            u32::try_from(codes.len())? - c_at
        ))
    };
    let mut plain = String::new();
    for step in &steps {
        plain.push_str(&row(step, effect::effects_or_worst(step))?);
    }
    let mut filled_rows = String::new();
    let representative = fill_step::REPRESENTATIVE.map(Some);
    for step in &steps {
        let filled = fill_step::fill_step(step, representative);
        if filled == *step {
            continue;
        }
        filled_rows.push_str(&row(step, effect::effects_or_worst(&filled))?);
    }
    let mut rs = String::new();
    let _ = writeln!(
        rs,
        "/// The text of every row below, one step after another.\npub(crate) static STEP_TEXT: &str = {text:?};"
    );
    let _ = writeln!(
        rs,
        "/// The effects of every row below (indices into `Effect::ALL`).\npub(crate) static STEP_CODES: &[u8] = &{codes:?};"
    );
    let _ = write!(
        rs,
        "/// Every fix step of the embedded knowledge base, sorted, with its effects, classified\n/// at build time: `[text offset, text length, codes offset, codes length]`.\npub(crate) static STEP_EFFECTS: &[[u32; 4]] = &[\n{plain}];\n"
    );
    let _ = write!(
        rs,
        "/// Every fix step with a placeholder the machine fills, sorted, with the effects of\n/// its form filled with representative values (`fill_step::REPRESENTATIVE`).\npub(crate) static FILLED_EFFECTS: &[[u32; 4]] = &[\n{filled_rows}];\n"
    );
    std::fs::write(out.join("step_effects.rs"), rs)?;
    Ok(())
}

/// Builds the index in `OUT_DIR/idx` and writes `OUT_DIR/embedded_index.rs`, which embeds
/// every index file except lock files.
fn write_index(kb: &gpukb_kb_compile::Compiled, out: &std::path::Path) -> Result<(), BoxErr> {
    let dir = out.join("idx");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let index = kb.index_in(tantivy::directory::MmapDirectory::open(&dir)?)?;
    drop(index);
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    names.sort();
    let mut rs = String::from(
        "/// Files of the embedded tantivy index.\npub(crate) static INDEX_FILES: &[(&str, &[u8])] = &[\n",
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
