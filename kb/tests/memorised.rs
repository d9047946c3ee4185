//! `Kb::lint_eval`, the memorisation lint: a KB example or signature that copies a
//! paste-specific part of an eval paste is a problem; a paste that shares only product
//! text (exact error messages, text seen in several threads) with the KB is not.

use gpukb_kb::memorised::Paste;
use gpukb_kb::Kb;

fn paste(id: &str, source: &str, text: &str) -> Paste {
    Paste {
        id: id.into(),
        source: source.into(),
        text: text.into(),
    }
}

/// Some real KB example of at least `min` characters, with its entry id.
fn some_example(kb: &Kb, min: usize) -> (String, String, String) {
    for e in kb.list(None).unwrap() {
        for (name, text) in kb.examples(&e.id).unwrap() {
            if text.chars().count() >= min {
                return (e.id, name, text);
            }
        }
    }
    panic!("no example of {min}+ characters");
}

#[test]
fn a_planted_copied_span_is_a_problem() {
    let kb = Kb::open().unwrap();
    let (id, name, text) = some_example(&kb, 120);
    // The paste quotes 80 characters of the example in the middle of its own text, with
    // different line breaks and case: still a copy.
    let span: String = text.chars().skip(10).take(80).collect();
    let quoted = format!(
        "user log start\n{}\nuser log end",
        span.to_uppercase().replace(' ', "\n  ")
    );
    let issues = kb
        .lint_eval(
            &[paste("planted-1", "https://example.org/t/1", &quoted)],
            "",
        )
        .unwrap();
    let file = format!("kb/examples/{id}/{name}");
    assert!(
        issues
            .iter()
            .any(|i| i.file == file && i.message.contains("planted-1")),
        "expected a finding on {file}: {issues:?}"
    );
}

#[test]
fn a_planted_copied_version_or_path_is_a_problem() {
    let kb = Kb::open().unwrap();
    // Find an example with a user path or a three-part version and make a paste that holds
    // only that token plus unrelated words.
    let re = regex::Regex::new(r"/home/[\w.-]+(?:/[\w.-]+)+|\b\d+\.\d+\.\d+-\d+-[a-z]+\b").unwrap();
    let (id, name, token) = kb
        .list(None)
        .unwrap()
        .into_iter()
        .find_map(|e| {
            kb.examples(&e.id).unwrap().into_iter().find_map(|(n, t)| {
                re.find(&t)
                    .map(|m| (e.id.clone(), n, m.as_str().to_string()))
            })
        })
        .expect("an example with a home path or kernel release");
    let text = format!("something failed near {token} today");
    let issues = kb
        .lint_eval(&[paste("planted-2", "https://example.org/t/2", &text)], "")
        .unwrap();
    let file = format!("kb/examples/{id}/{name}");
    assert!(
        issues
            .iter()
            .any(|i| i.file == file && i.message.contains(&token.to_lowercase())),
        "expected {token} flagged in {file}: {issues:?}"
    );
    // The same token in the primary-source corpus is not paste-specific.
    let issues = kb
        .lint_eval(
            &[paste("planted-2", "https://example.org/t/2", &text)],
            &token,
        )
        .unwrap();
    assert!(
        !issues
            .iter()
            .any(|i| i.file == file && i.message.contains(&token.to_lowercase())),
        "{issues:?}"
    );
}

#[test]
fn clean_pastes_pass() {
    let kb = Kb::open().unwrap();
    let clean = [
        // Written for this test: shares only the exact CUDA message (a code-table text).
        paste(
            "clean-1",
            "https://example.org/t/3",
            "worker 3 crashed: RuntimeError: CUDA error: no kernel image is available for \
             execution on the device (while loading /home/tester/zzq-proj/model.bin)",
        ),
        paste(
            "clean-2",
            "https://example.org/t/4",
            "qwerty 9.8.7-1-zzq failed on zzqhost-1:1:2 with nothing in common",
        ),
    ];
    let issues = kb.lint_eval(&clean, "").unwrap();
    assert!(issues.is_empty(), "{issues:?}");
}

#[test]
fn text_seen_in_two_threads_is_product_output() {
    let kb = Kb::open().unwrap();
    let (id, name, text) = some_example(&kb, 120);
    let span: String = text.chars().take(90).collect();
    let issues = kb
        .lint_eval(
            &[
                paste("a", "https://example.org/t/5", &span),
                paste("b", "https://example.org/t/6", &span),
            ],
            "",
        )
        .unwrap();
    let file = format!("kb/examples/{id}/{name}");
    assert!(
        !issues
            .iter()
            .any(|i| i.file == file && i.message.contains("a span")),
        "{issues:?}"
    );
}
