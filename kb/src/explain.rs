//! `explain`: looks up error codes in the embedded code tables (CUresult, cudaError_t, NVML,
//! cuBLAS, cuDNN old and new numbering, NCCL, Xid) and the curated entries linked to them.

use serde::Serialize;

use crate::{EntrySummary, Kb, KbError};

/// One code-table row and the curated diagnoses that explain it.
#[derive(Debug, Clone, Serialize)]
pub struct CodeInfo {
    /// Generated id, e.g. `cuda-209`, `xid-79`, `cudnn8-3`.
    pub id: String,
    /// Library / enum, e.g. "CUresult (driver API)".
    pub library: String,
    /// Code key, e.g. `cuda:209`.
    pub key: String,
    /// Numeric value.
    pub number: i64,
    /// Symbolic name (Xid: mnemonic).
    pub name: String,
    /// Exact message string (Xid: description).
    pub message: String,
    /// Longer description.
    pub description: String,
    /// Where the row comes from.
    pub source: String,
    /// How it was verified.
    pub verified: String,
    /// Curated entries whose `codes` name it.
    pub linked: Vec<EntrySummary>,
}

const PREFIXES: &[&str] = &["cuda", "cudart", "nvml", "cublas", "cudnn", "nccl", "xid"];

/// Parses `xid 79`, `nccl:2`, `cudart 35` into (prefix, number).
fn prefixed(code: &str) -> Option<(&'static str, i64)> {
    let lower = code.trim().to_ascii_lowercase();
    for p in PREFIXES.iter().rev() {
        // "cudart" before "cuda"
        let p: &'static str = p;
        if let Some(rest) = lower.strip_prefix(p) {
            let rest = rest.trim_start_matches([' ', ':', '_', '=', '#', '-']);
            if let Ok(n) = rest.trim().parse::<i64>() {
                return Some((p, n));
            }
        }
    }
    None
}

impl Kb {
    /// Looks up a code: a number (all libraries), `prefix N`, or a symbolic name.
    pub fn explain(&self, code: &str) -> Result<Vec<CodeInfo>, KbError> {
        let c = code.trim();
        if c.is_empty() || c.len() > 120 {
            return Err(KbError::BadCode(c.chars().take(40).collect()));
        }
        let (sql, args): (&str, Vec<String>) = if let Ok(n) = c.parse::<i64>() {
            (
                "SELECT * FROM codes WHERE number = ?1 AND prefix != 'xid' ORDER BY id",
                vec![n.to_string()],
            )
        } else if let Some((p, n)) = prefixed(c) {
            (
                "SELECT * FROM codes WHERE prefix = ?1 AND number = ?2 ORDER BY id",
                vec![p.to_string(), n.to_string()],
            )
        } else if c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_') {
            (
                "SELECT * FROM codes WHERE name = ?1 COLLATE NOCASE ORDER BY id",
                vec![c.to_string()],
            )
        } else {
            return Err(KbError::BadCode(c.to_string()));
        };
        let mut st = self.db.prepare(sql)?;
        let rows = st.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok((
                CodeInfo {
                    id: r.get("id")?,
                    library: r.get("library")?,
                    key: r.get("key")?,
                    number: r.get("number")?,
                    name: r.get("name")?,
                    message: r.get("message")?,
                    description: r.get("description")?,
                    source: r.get("source")?,
                    verified: r.get("verified")?,
                    linked: Vec::new(),
                },
                r.get::<_, String>("linked")?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (mut info, linked) = row?;
            let mut st = self
                .db
                .prepare_cached("SELECT id, category, layer, title FROM entries WHERE id = ?1")?;
            for id in linked.split(',').filter(|s| !s.is_empty()) {
                let rows = st.query_map([id], EntrySummary::from_row)?;
                for e in rows {
                    info.linked.push(e?);
                }
            }
            out.push(info);
        }
        Ok(out)
    }
}
