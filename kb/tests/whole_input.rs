//! The error is found wherever it sits in what the window keeps (issue 9 §1):
//! deep inside one long line, and inside a JSON log record whose string
//! escapes hide the traceback's line breaks.

use gpukb_kb::Kb;

const ERR: &str =
    "RuntimeError: CUDA error: no kernel image is available for execution on the device";

fn top(kb: &Kb, text: &str) -> String {
    kb.search(text, None, 3)
        .unwrap()
        .first()
        .map(|h| h.id.clone())
        .unwrap_or_default()
}

#[test]
fn an_error_deep_inside_one_long_line_is_found() {
    let kb = Kb::open().unwrap();
    let plain = top(&kb, ERR);
    assert!(!plain.is_empty());
    let long = format!(
        "{} {ERR} {}",
        "progress 12% |#####| ".repeat(600),
        "eta 3s ".repeat(100)
    );
    assert!(long.len() > 12_000);
    assert_eq!(top(&kb, &long), plain, "the error 12 KB into the line");
}

#[test]
fn an_error_inside_a_json_log_record_is_found() {
    let kb = Kb::open().unwrap();
    let plain = top(&kb, ERR);
    let record = format!(
        r#"{{"ts": "2026-11-30T10:00:00Z", "level": "error", "msg": "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    x = torch.ones(1).cuda() * 2\n{ERR}\nCUDA kernel errors might be asynchronously reported at some other API call\n"}}"#
    );
    assert_eq!(top(&kb, &record), plain);
}
