//! Keeps the `///` docs written for `missing_docs` (issue 24 §5) out of the
//! published JSON Schemas (`cli/schemas/`) until they are published on
//! purpose. schemars turns every doc comment into a `description`, so a doc
//! on a field that had none changes `gpukb schema` and its checked-in files;
//! the refactor that added the docs leaves every output as it was.
//!
//! To publish them (a schema change, cli/schemas/README.md): delete every
//! `#[schemars(description = UNPUBLISHED)]` and
//! `#[schemars(transform = unit_variants_as_enum)]`, delete this module, and
//! bless the schemas.

use schemars::Schema;
use serde_json::Value;

/// The schema description of an item whose doc is not published yet: empty,
/// which schemars leaves out.
pub(crate) const UNPUBLISHED: &str = "";

/// Lists an enum's plain unit variants (those without a published
/// description) as one `{"type": "string", "enum": [...]}`, first, as
/// schemars does for undocumented variants; a documented unit variant would
/// otherwise become its own `const` entry of a `oneOf`.
pub(crate) fn unit_variants_as_enum(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(items)) = map.remove("oneOf") else {
        return;
    };
    let (plain, rest): (Vec<Value>, Vec<Value>) = items.into_iter().partition(is_plain_unit);
    let names: Vec<Value> = plain
        .into_iter()
        .filter_map(|v| v.get("const").cloned())
        .collect();
    if rest.is_empty() {
        map.insert("type".into(), "string".into());
        map.insert("enum".into(), Value::Array(names));
        return;
    }
    let mut one_of = Vec::new();
    if !names.is_empty() {
        one_of.push(serde_json::json!({ "type": "string", "enum": names }));
    }
    one_of.extend(rest);
    map.insert("oneOf".into(), Value::Array(one_of));
}

/// A unit variant's schema with nothing but its name: `{"type": "string",
/// "const": name}`.
fn is_plain_unit(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.len() == 2
            && o.get("type").and_then(Value::as_str) == Some("string")
            && o.contains_key("const")
    })
}
