//! `lint`: re-checks the embedded knowledge base. Reports the problems the build recorded
//! (schema, categories, code references, signature coverage), unknown rule predicates, and
//! every example whose top search hit is not its own entry.

use serde::Serialize;

use crate::{Kb, KbError};

/// One lint problem, tied to a file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LintIssue {
    /// Repository-relative file, e.g. `kb/entries/foo.toml`.
    pub file: String,
    /// What is wrong, precisely.
    pub message: String,
}

impl Kb {
    /// All lint problems; empty when the knowledge base is clean.
    pub fn lint(&self) -> Result<Vec<LintIssue>, KbError> {
        let mut out = Vec::new();
        {
            let mut st = self.db.prepare("SELECT file, message FROM build_issues")?;
            let rows = st.query_map([], |r| {
                Ok(LintIssue {
                    file: r.get(0)?,
                    message: r.get(1)?,
                })
            })?;
            for r in rows {
                out.push(r?);
            }
        }
        {
            let mut st = self
                .db
                .prepare("SELECT entry_id, predicate FROM conditions ORDER BY entry_id")?;
            let rows =
                st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            for r in rows {
                let (id, p) = r?;
                if !crate::diagnose::checks::is_check(&p) {
                    out.push(LintIssue {
                        file: format!("kb/entries/{id}.toml"),
                        message: format!(
                            "condition when = \"{p}\" is not a check in kb/src/diagnose/checks.rs (known: {})",
                            crate::diagnose::checks::CHECKS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
                        ),
                    });
                }
            }
        }
        for e in self.list(None)? {
            for (name, text) in self.examples(&e.id)? {
                let hits = self.search(&text, None, 3)?;
                match hits.first() {
                    Some(h) if h.id == e.id => {}
                    Some(h) => out.push(LintIssue {
                        file: format!("kb/examples/{}/{name}", e.id),
                        message: format!(
                            "top search hit is {} (score {:.1}), not {}{}",
                            h.id,
                            h.score,
                            e.id,
                            hits.iter()
                                .position(|x| x.id == e.id)
                                .map(|p| format!(" (it ranks #{})", p + 1))
                                .unwrap_or_default()
                        ),
                    }),
                    None => out.push(LintIssue {
                        file: format!("kb/examples/{}/{name}", e.id),
                        message: format!("search finds nothing; expected {}", e.id),
                    }),
                }
            }
        }
        Ok(out)
    }
}
