//! A model of glibc's dynamic loader (`ld.so`): for a process with a given
//! environment, which file each library name resolves to, by which step of
//! the search ([`LoadRule`]) and through which directory or cache entry.
//!
//! The model is pure: the machine is reached only through [`ObjectFs`]
//! (realpaths and ELF headers; [`crate::host::Host`] implements it, so
//! symlink chains are followed inside the root), and everything else the
//! loader reads is an input: the environment ([`LoaderEnvironment`]), the parsed
//! `/etc/ld.so.cache`, `/etc/ld.so.preload`, and the target's loader
//! ([`Target`]: default directories, hwcaps subdirectories, `$LIB`,
//! `$PLATFORM`, ELF class and machine). [`Process`] replays what a process
//! does (start-up, `dlopen`s by a given caller) and keeps the link map.
//!
//! Every rule cites glibc 2.36 (`elf/dl-load.c`, `elf/dl-cache.c`,
//! `elf/rtld.c`, `elf/dl-object.c`); `tests/tests/loader_differential.rs`
//! checks the model against the real loader on random layouts of real
//! libraries.

mod search;
mod target;
#[cfg(test)]
mod tests;
pub mod torch;

pub use search::{LoadError, Loaded, Process, Request};
pub use target::{LoaderEnvironment, Target};

use crate::elf::{ElfIdent, ElfInfo};
pub use crate::fingerprint::LoadRule;
use crate::host::{Host, HostError};
use std::collections::BTreeSet;

/// Which rules the model applies (all of them, except in tests that check
/// each rule is needed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules(BTreeSet<LoadRule>);

impl Rules {
    /// Every rule.
    pub fn all() -> Rules {
        Rules(LoadRule::ALL.into_iter().collect())
    }

    /// Every rule but `r`.
    pub fn without(r: LoadRule) -> Rules {
        let mut all = Rules::all();
        all.0.remove(&r);
        all
    }

    /// Whether `r` is applied.
    pub fn has(&self, r: LoadRule) -> bool {
        self.0.contains(&r)
    }
}

impl Default for Rules {
    fn default() -> Self {
        Rules::all()
    }
}

/// The loader's view of the filesystem.
pub trait ObjectFs {
    /// The real path of `path` (absolute), symlinks followed; `None` when absent.
    fn realpath(&self, path: &str) -> Result<Option<String>, HostError>;
    /// The ELF identification of the file at real path `real`; `Ok(None)`
    /// when it is not an ELF file.
    fn ident(&self, real: &str) -> Result<Option<ElfIdent>, HostError>;
    /// The dynamic section of the ELF file at real path `real`.
    fn dynamic(&self, real: &str) -> Result<Option<ElfInfo>, HostError>;
    /// Every name in directory `dir`, in ASCII lower case (none when it is absent), when
    /// listing it is cheaper than resolving each candidate in it; `None` to resolve each.
    fn names_in(&self, _dir: &str) -> Option<Names> {
        None
    }
}

pub use crate::host::{NameHasher, Names};

/// The host as the loader sees it. A replayed capture answers only what the
/// gpukb that wrote it asked: a path it did not resolve is taken as absent,
/// a file whose headers it did not read as an object of the right class
/// without dependencies (so older captures give what they gave before).
impl ObjectFs for Host {
    fn realpath(&self, path: &str) -> Result<Option<String>, HostError> {
        match self.canonicalize(path) {
            // A file whose ELF summary the capture holds is there as named.
            Err(HostError::NotCaptured { .. }) => match self.elf(path) {
                Ok(Some(_)) => Ok(Some(path.to_string())),
                // A file its directory's recorded listing names is there as named.
                _ => {
                    let path = lexical(path);
                    let (dir, name) = path.rsplit_once('/').unwrap_or(("", &path));
                    let listed = self
                        .list(if dir.is_empty() { "/" } else { dir })
                        .ok()
                        .flatten();
                    Ok(listed
                        .is_some_and(|l| l.iter().any(|e| e.name == name))
                        .then(|| path.clone()))
                }
            },
            r => r,
        }
    }

    fn ident(&self, real: &str) -> Result<Option<ElfIdent>, HostError> {
        match self.elf_ident(real) {
            Err(HostError::NotCaptured { .. }) => Ok(Some(ElfIdent {
                class: 0,
                machine: 0,
                kind: 0,
            })),
            r => r,
        }
    }

    fn dynamic(&self, real: &str) -> Result<Option<ElfInfo>, HostError> {
        match self.elf(real) {
            Err(HostError::NotCaptured { .. }) => Ok(Some(ElfInfo::default())),
            r => r,
        }
    }

    fn names_in(&self, dir: &str) -> Option<Names> {
        self.live_names_in(dir)
    }
}

/// Joins a possibly relative path to `cwd` (the kernel resolves relative
/// paths against the process's working directory).
/// `a/b/../c` → `a/c`, `.` dropped: a path without touching the file system (for
/// looking a file up in a capture's recorded listings).
fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

pub(crate) fn absolute(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", cwd.trim_end_matches('/'))
    }
}

/// The directory part of `path` (glibc elf/dl-object.c `_dl_new_object`:
/// the origin is the name's directory, `/` for a file in the root).
pub(crate) fn dirname(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => path[..i].to_string(),
        None => ".".into(),
    }
}
