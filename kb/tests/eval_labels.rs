//! `Kb::check_labels` and the `same_as` map read from the embedded kb/categories.tsv.

use gpukb_kb::eval::EvalCase;
use gpukb_kb::Kb;

fn case(label: &str) -> EvalCase {
    EvalCase {
        id: Some(format!("case-{label}")),
        error: "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all".into(),
        root_cause: label.into(),
        machine: None,
    }
}

#[test]
fn labels_must_be_our_categories_or_named_by_a_same_as() {
    let kb = Kb::open().unwrap();
    // ours
    kb.check_labels(&[case("oom")]).unwrap();
    // named by missing_runtime_lib's same_as (whether or not it is also a category)
    kb.check_labels(&[case("pkg_manager_dropped_cuda_deps")])
        .unwrap();
    let err = kb
        .check_labels(&[case("oom"), case("not_a_cause")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("case-not_a_cause") && err.contains("\"not_a_cause\""),
        "{err}"
    );
    assert!(kb.eval(&[case("not_a_cause")]).is_err());
}

#[test]
fn the_embedded_same_as_column_links_both_ways() {
    let map = Kb::open().unwrap().category_map().unwrap();
    assert!(map.same_cause("cdi_spec_unresolvable", "container_cdi_spec_missing"));
    assert!(map.same_cause("container_cdi_spec_missing", "cdi_spec_unresolvable"));
    assert!(map.same_cause("cuda13_windows_dll_layout", "missing_runtime_lib"));
    assert!(!map.same_cause("oom", "missing_runtime_lib"));
}
