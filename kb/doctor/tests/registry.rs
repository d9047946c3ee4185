//! The doctor's check registry stays consistent with its ids: `CHECKS` lists
//! every `CheckId` once, in `CheckId::ALL`'s order; names round-trip through
//! serde; no check explains itself; context checks say so. That its categories
//! exist and `kb/FORMAT.md` lists its checks is tested in `kb/tests/checks.rs`.

use gpukb_doctor::checks::{Check, CheckId, CHECKS};

#[test]
fn registry_lists_every_check_id_once_in_order() {
    let ids: Vec<CheckId> = CHECKS.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        CheckId::ALL,
        "kb/doctor/src/checks/mod.rs CHECKS must list every CheckId once, in the order of checks/id.rs"
    );
    for &id in CheckId::ALL {
        assert_eq!(CheckId::from_name(id.name()), Some(id), "{id}");
        assert_eq!(Check::of(id).map(|c| c.id), Some(id));
        assert_eq!(id.to_string(), id.name());
        let json = serde_json::to_value(id).unwrap();
        assert_eq!(json, serde_json::json!(id.name()));
        assert_eq!(serde_json::from_value::<CheckId>(json).unwrap(), id);
    }
    assert!(serde_json::from_value::<CheckId>(serde_json::json!("no_such_check")).is_err());
    assert!("no_such_check".parse::<CheckId>().is_err());
}

#[test]
fn no_check_explains_itself_and_context_checks_say_so() {
    for c in CHECKS {
        for cause in c.explained_by {
            assert_ne!(*cause, c.id, "{} explains itself", c.id);
        }
        assert_eq!(
            c.context,
            c.meaning.ends_with("(context)"),
            "{}: a context check's meaning ends with \"(context)\", and only theirs",
            c.id
        );
    }
}
