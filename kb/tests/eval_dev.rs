//! Reports (does not assert) search accuracy on shared/eval/dev.jsonl when it is present.
// Tests read the shared eval file from the repository checkout.
#![allow(clippy::disallowed_methods)]

use gpukb_kb::Kb;

#[test]
fn report_dev_accuracy() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/eval/dev.jsonl");
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("no {path}; skipping");
        return;
    };
    let kb = Kb::open().expect("open kb");
    let cases = gpukb_kb::eval::parse_jsonl(&text).expect("parse");
    let r = kb.eval(&cases).expect("eval");
    let pct = |a: usize, n: usize| 100.0 * a as f64 / n.max(1) as f64;
    println!(
        "dev.jsonl: {} cases, top-1 {:.1}%, top-3 {:.1}%",
        r.overall.n,
        pct(r.overall.top1, r.overall.n),
        pct(r.overall.top3, r.overall.n)
    );
    for m in &r.misses {
        println!(
            "MISS {} expected {} got {:?} :: {}",
            m.id, m.expected, m.got, m.snippet
        );
    }
}
