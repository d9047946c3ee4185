//! Reading fingerprint files: schema 2 as written by this gpukb, schema 1 as
//! written before it (upgraded in place: its `cuInit` string becomes an
//! observation, `"not called (--quick)"` an unobservable one), anything newer
//! rejected in one line.

use crate::fingerprint::{Fingerprint, SCHEMA_VERSION};
use serde_json::{json, Value};

/// What `cuda.init` held in schema 1 when `--quick` skipped `cuInit` (and what
/// a capture's recorded `cuda` answer still holds then).
pub const SCHEMA1_INIT_SKIPPED: &str = "not called (--quick)";

/// Why a fingerprint file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes are not JSON; the parser's message.
    #[error("not JSON: {0}")]
    Json(String),
    /// JSON without a top-level `schema` number.
    #[error("not a gpukb fingerprint (no \"schema\" number)")]
    NoSchema,
    /// Written by a newer gpukb, in this schema number.
    #[error("fingerprint schema {0} is newer than this gpukb reads (1 to {SCHEMA_VERSION}): upgrade gpukb")]
    TooNew(u64),
    /// The document does not fit its schema.
    #[error("fingerprint schema {schema}: {message}")]
    Invalid {
        /// The schema number the file declares.
        schema: u64,
        /// What does not fit, as the deserialiser says.
        message: String,
    },
}

/// Parses a fingerprint file's bytes (schema 1 or 2).
pub fn fingerprint_from_json(bytes: &[u8]) -> Result<Fingerprint, ReadError> {
    let mut v: Value = serde_json::from_slice(bytes).map_err(|e| ReadError::Json(e.to_string()))?;
    let schema = v
        .get("schema")
        .and_then(Value::as_u64)
        .ok_or(ReadError::NoSchema)?;
    if schema > u64::from(SCHEMA_VERSION) {
        return Err(ReadError::TooNew(schema));
    }
    if schema == 1 {
        upgrade_schema1(&mut v);
    }
    serde_json::from_value(v).map_err(|e| ReadError::Invalid {
        schema,
        message: e.to_string(),
    })
}

/// Schema 1 → 2: `cuda.value.init` was a bare CUresult name.
fn upgrade_schema1(v: &mut Value) {
    let source = json!({"kind": "cuda_driver", "call": "cuInit"});
    if let Some(init) = v.pointer_mut("/cuda/value/init") {
        if let Some(name) = init.as_str().map(str::to_string) {
            *init = if name == SCHEMA1_INIT_SKIPPED {
                json!({"status": "unobservable", "source": source,
                       "reason": "cuInit was not called (--quick)"})
            } else {
                json!({"status": "found", "source": source, "value": name})
            };
        }
    }
    v["schema"] = json!(SCHEMA_VERSION);
}
