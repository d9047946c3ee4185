//! A machine to vary: a recorded capture (journal and file contents) held in
//! memory, edited question by question, and observed by replaying it exactly
//! as `gpukb doctor --replay` does.
//!
//! The one rule the generator adds to replay: a question the base capture
//! never asked (a path in a directory a variant added to `LD_LIBRARY_PATH`)
//! is answered "absent", unless the variant answers it. [`Machine::observe`]
//! finds those questions in the fingerprint ("… is not in the capture"),
//! records them as absent and observes again, until none is left.

use gpukb_agent::host::{CaptureData, DirEntry, EntryKind, Host, HostError, Recorded};
use gpukb_agent::{fingerprint, Fingerprint, Settings};
use serde_json::Value;
use std::sync::Arc;

/// A capture being varied.
#[derive(Clone)]
pub(crate) struct Machine(pub CaptureData);

impl Machine {
    /// `tests/fixtures/<name>`, a capture directory.
    pub(crate) fn load(name: &str) -> Machine {
        let dir = gpukb_tests::fixture(name);
        Machine(CaptureData::read(&dir).unwrap_or_else(|e| panic!("{name}: {e}")))
    }

    pub(crate) fn env(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.0.journal.env.insert(k.into(), v.into()),
            None => self.0.journal.env.remove(k),
        };
        self
    }

    pub(crate) fn file(&mut self, p: &str, bytes: impl Into<Vec<u8>>) -> &mut Self {
        let b = bytes.into();
        self.0
            .journal
            .files
            .insert(p.into(), Recorded::Ok(b.len() as u64));
        self.0.files.insert(p.into(), b);
        self
    }

    pub(crate) fn no_file(&mut self, p: &str) -> &mut Self {
        self.0.files.remove(p);
        self.0.journal.files.insert(p.into(), Recorded::Absent);
        self
    }

    /// The text of a file the capture holds.
    pub(crate) fn text(&self, p: &str) -> String {
        String::from_utf8_lossy(self.0.files.get(p).map_or(&[][..], |b| b.as_slice())).into_owned()
    }

    pub(crate) fn canon(&mut self, p: &str, target: Option<&str>) -> &mut Self {
        let r = match target {
            Some(t) => Recorded::Ok(t.to_string()),
            None => Recorded::Absent,
        };
        self.0.journal.canon.insert(p.into(), r);
        self
    }

    pub(crate) fn list(&mut self, dir: &str, entries: Option<&[(&str, EntryKind)]>) -> &mut Self {
        let r = match entries {
            Some(e) => Recorded::Ok(
                e.iter()
                    .map(|(n, k)| DirEntry {
                        name: n.to_string(),
                        kind: *k,
                    })
                    .collect(),
            ),
            None => Recorded::Absent,
        };
        self.0.journal.lists.insert(dir.into(), r);
        self
    }

    /// Keeps only the entries of a recorded listing that `keep` accepts.
    pub(crate) fn filter_list(&mut self, dir: &str, keep: impl Fn(&str) -> bool) -> &mut Self {
        if let Some(Recorded::Ok(v)) = self.0.journal.lists.get_mut(dir) {
            v.retain(|e| keep(&e.name));
        }
        self
    }

    /// Adds entries to a recorded listing (kept sorted by name).
    pub(crate) fn add_to_list(&mut self, dir: &str, add: &[(&str, EntryKind)]) -> &mut Self {
        if let Some(Recorded::Ok(v)) = self.0.journal.lists.get_mut(dir) {
            for (n, k) in add {
                if !v.iter().any(|e| e.name == *n) {
                    v.push(DirEntry {
                        name: n.to_string(),
                        kind: *k,
                    });
                }
            }
            v.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self
    }

    pub(crate) fn answer(&mut self, k: &str, v: Recorded<Value>) -> &mut Self {
        self.0.journal.answers.insert(k.into(), v);
        self
    }

    /// A recorded answer's value (`nvml`, `cuda`), to edit in place.
    pub(crate) fn answer_mut(&mut self, k: &str) -> &mut Value {
        match self.0.journal.answers.get_mut(k) {
            Some(Recorded::Ok(v)) => v,
            _ => panic!("the capture has no {k} answer"),
        }
    }

    /// The answer a failed vendor-library call records.
    pub(crate) fn failed(what: &str, message: &str) -> Recorded<Value> {
        Recorded::Failed(HostError::Library {
            what: what.into(),
            message: message.into(),
        })
    }

    /// Observes the machine as `gpukb doctor --replay` would (see the module doc).
    pub(crate) fn observe(&self) -> Fingerprint {
        let mut m = self.clone();
        let mut last = Vec::new();
        for _ in 0..40 {
            let dir = tempfile::tempdir().expect("temp dir");
            m.0.write(dir.path()).expect("write capture");
            let host = Host::replay(dir.path()).expect("replay");
            let fp = fingerprint(Arc::new(host), &Settings::default());
            let text = serde_json::to_string(&fp).expect("fingerprint serialises");
            let missing = unasked(&text);
            if missing.is_empty() {
                return fp;
            }
            last.clone_from(&missing);
            for (kind, path) in missing {
                let j = &mut m.0.journal;
                match kind {
                    Question::File => {
                        j.files.insert(path, Recorded::Absent);
                    }
                    Question::List => {
                        j.lists.insert(path, Recorded::Absent);
                    }
                    Question::Canon => {
                        j.canon.insert(path, Recorded::Absent);
                    }
                    Question::Elf => {
                        j.elf.insert(path, Recorded::Absent);
                    }
                }
            }
        }
        panic!("observing the variant keeps asking new questions: {last:?}")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Question {
    File,
    List,
    Canon,
    Elf,
}

/// The path questions a fingerprint says the capture could not answer.
fn unasked(text: &str) -> Vec<(Question, String)> {
    const PREFIXES: &[(&str, Question)] = &[
        ("resolution of ", Question::Canon),
        ("listing of ", Question::List),
        ("ELF summary of ", Question::Elf),
        ("contents of ", Question::File),
        ("file ", Question::File),
    ];
    let mut out = Vec::new();
    let parts: Vec<&str> = text.split(" is not in the capture").collect();
    for chunk in &parts[..parts.len().saturating_sub(1)] {
        let best = PREFIXES
            .iter()
            .filter_map(|(p, q)| chunk.rfind(p).map(|i| (i + p.len(), *q)))
            .max_by_key(|(i, _)| *i);
        if let Some((i, q)) = best {
            let path = &chunk[i..];
            if path.starts_with('/') && !path.contains(['"', ' ']) {
                let e = (q, path.to_string());
                if !out.contains(&e) {
                    out.push(e);
                }
            }
        }
    }
    out
}
