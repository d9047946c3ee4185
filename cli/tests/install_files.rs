//! `gpukb completions SHELL`, `gpukb man` and `gpukb --version` (issue 13 §3):
//! each generates, and names the real subcommands and their options.
#![allow(clippy::disallowed_methods)] // runs the binary

use std::process::Command;

fn gpukb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The subcommands `gpukb --help` lists (so a new one is checked too).
fn subcommands() -> Vec<String> {
    let (_, help, _) = gpukb(&["--help"]);
    let names: Vec<String> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        // "  name   about"; wrapped about lines start with more spaces.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|w| *w != "help")
        .map(String::from)
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    names
}

#[test]
fn completions_name_every_subcommand_for_every_shell() {
    let subs = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, script, err) = gpukb(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for sub in &subs {
            assert!(
                script.contains(sub.as_str()),
                "{shell} completion lacks {sub}"
            );
        }
        // Options of a subcommand are completed too.
        assert!(
            script.contains("--replay"),
            "{shell} completion lacks --replay"
        );
    }
    let (code, _, err) = gpukb(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("tcsh"), "{err}");
}

#[test]
fn man_page_is_roff_with_every_subcommand() {
    let (code, page, err) = gpukb(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        page.contains(".TH gpukb 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains(".SH SYNOPSIS") && page.contains(".SH COMMANDS"));
    for sub in subcommands() {
        assert!(
            page.contains(&format!("gpukb {sub}")),
            "the man page lacks gpukb {sub}"
        );
    }
}

#[test]
fn long_version_names_the_knowledge_base() {
    let (code, line, _) = gpukb(&["--version"]);
    assert_eq!(code, 0);
    let kb = gpukb_kb::Kb::open().unwrap();
    let expect = format!(
        "gpukb {} (knowledge base: {} entries, as of {})",
        env!("CARGO_PKG_VERSION"),
        kb.len().unwrap(),
        gpukb_kb::as_of()
    );
    assert_eq!(line.trim(), expect);
    assert!(kb.len().unwrap() > 0);
    let (_, short, _) = gpukb(&["-V"]);
    assert_eq!(short.trim(), format!("gpukb {}", env!("CARGO_PKG_VERSION")));
}
