//! The JSON Schemas of every JSON output, generated from the Rust types with
//! `schemars` and checked in under `cli/schemas/NAME.schema.json` (a test
//! regenerates and compares them, and validates real outputs of every
//! fixture). `gpukb schema NAME` prints one.
//!
//! Evolution rules (cli/schemas/README.md): within one schema version fields
//! and enum values may be added, never renamed or removed; a rename or
//! removal bumps the version number the output carries (`schema`,
//! `schema_version`, `format`).
//!
//! **Adding an output**: append one line to [`SCHEMAS`] (name, what it
//! describes, the generator), run `GPUKB_BLESS=1 cargo test -p gpukb --test
//! schemas` to write `cli/schemas/NAME.schema.json`, and add real outputs to
//! that test's validation list.

use std::io::Write;
use std::process::ExitCode;

/// One published schema.
pub struct Schema {
    /// File stem under `cli/schemas/` and the argument of `gpukb schema`.
    pub name: &'static str,
    /// The command whose output it describes.
    pub describes: &'static str,
    pub generate: fn() -> serde_json::Value,
}

/// The schema of `T` under schemars' read contract: what gpukb accepts when it reads the
/// document back (a field with a default may be absent). For outputs gpukb also reads
/// (fingerprint, capture, probe) and those published before [`output_of`].
fn of<T: schemars::JsonSchema>() -> serde_json::Value {
    open_for_additions(serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default())
}

/// The schema of `T` under schemars' write contract: what gpukb writes, every field
/// present unless it is skipped when empty. For outputs gpukb never reads back (plan,
/// agent --once, history, diff).
fn output_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::default()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    open_for_additions(serde_json::to_value(schema).unwrap_or_default())
}

/// Drops `"additionalProperties": false` (from `deny_unknown_fields` on
/// types that also read hand-written files): outputs may gain fields within
/// a schema version, so a published schema must not refuse them.
fn open_for_additions(mut v: serde_json::Value) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                if o.get("additionalProperties") == Some(&serde_json::Value::Bool(false)) {
                    o.remove("additionalProperties");
                }
                o.values_mut().for_each(walk);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

fn doctor() -> serde_json::Value {
    open_for_additions(gpukb_doctor::schema())
}

/// Every published schema: the one list to extend (see the module docs).
pub const SCHEMAS: &[Schema] = &[
    Schema {
        name: "fingerprint",
        describes: "gpukb fingerprint --json; DIR/fingerprint.json of a capture",
        generate: of::<gpukb_agent::Fingerprint>,
    },
    Schema {
        name: "capture",
        describes: "DIR/capture.json written by gpukb capture (format 1)",
        generate: of::<gpukb_agent::host::Journal>,
    },
    Schema {
        name: "doctor",
        describes: "gpukb doctor --json",
        generate: doctor,
    },
    Schema {
        name: "search",
        describes: "gpukb search --json",
        generate: of::<crate::search::SearchOutput>,
    },
    Schema {
        name: "probe",
        describes: "gpukb probe --json; DIR/probe.json of a capture",
        generate: of::<gpukb_agent::probe::ProbeReport>,
    },
    Schema {
        name: "plan",
        describes: "gpukb plan --json (schema_version 1)",
        generate: output_of::<crate::plan::PlanOutput<'static>>,
    },
    Schema {
        name: "agent-once",
        describes: "gpukb agent --once --json",
        generate: output_of::<crate::agent::OnceOutput>,
    },
    Schema {
        name: "history",
        describes: "gpukb history --json",
        generate: output_of::<gpukb_monitor::store::History>,
    },
    Schema {
        name: "diff",
        describes: "gpukb diff A B --json",
        generate: output_of::<gpukb_monitor::diff::StackDiff>,
    },
    Schema {
        name: "kb-list",
        describes: "gpukb kb list --json",
        generate: of::<Vec<gpukb_kb::EntrySummary>>,
    },
    Schema {
        name: "kb-show",
        describes: "gpukb kb show ID --json",
        generate: of::<gpukb_kb::Entry>,
    },
];

/// The schema called `name`.
pub fn find(name: &str) -> Option<&'static Schema> {
    SCHEMAS.iter().find(|s| s.name == name)
}

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which output: fingerprint, capture, doctor, search, probe, plan, agent-once, history, diff, kb-list, kb-show (omit to list them).
    pub name: Option<String>,
}

pub fn run(args: &SchemaArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let Some(name) = &args.name else {
        for s in SCHEMAS {
            writeln!(out, "{:<12} {}", s.name, s.describes)?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let Some(s) = find(name) else {
        let names: Vec<&str> = SCHEMAS.iter().map(|s| s.name).collect();
        anyhow::bail!("no schema \"{name}\" (one of: {})", names.join(", "));
    };
    serde_json::to_writer_pretty(&mut *out, &(s.generate)())?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}
