//! The one seam between gpukb and the machine it observes.
//!
//! Every file read goes through a root, every command through one runner with
//! a timeout, every environment variable through one registry, and every call
//! into a vendor library (NVML, the CUDA driver API) through [`Host::answer`].
//! A [`Host`] works in one of three modes:
//!
//! * **live**: the real machine, files under a root (default `/`);
//! * **root**: a plain directory treated as `/` (a copied root filesystem):
//!   files only, no commands, no libraries, no environment;
//! * **replay**: a directory written by `gpukb capture`, answering every
//!   question exactly as the captured machine did.
//!
//! In live mode a host can also record what it observed ([`Host::recording`])
//! and write it out as a capture ([`Host::write_capture`]).
//!
//! Outcomes are `Result<Option<T>, HostError>`: `Ok(None)` means absent (no
//! such file, no such program: a finding), `Err` means the observation failed
//! (unreadable, timed out) and says why.
#![allow(clippy::disallowed_methods)] // this module is the seam the ban protects

mod capture;
pub mod elf_cache;
mod env;
mod kmsg;
mod paths;
mod runner;

pub use capture::{now_utc, utc_rfc3339, CaptureData, Journal, Recorded, CAPTURE_FORMAT};
pub use env::{EnvRegistry, ENV_PREFIXES, ENV_VARS};
pub use kmsg::KmsgRecords;
pub use runner::CommandOutput;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Largest file [`Host::read`] returns; bigger files are read through [`Host::elf`].
pub const MAX_READ_BYTES: u64 = 16 << 20;

/// Why an observation failed.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostError {
    /// A file or directory exists but could not be read.
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    /// A file is larger than gpukb reads.
    #[error("{path} is too large to read ({size} bytes)")]
    TooLarge { path: String, size: u64 },
    /// A command or library call did not answer in time.
    #[error("{what} did not answer within {seconds:.1} s")]
    Timeout { what: String, seconds: f64 },
    /// A command could not be started.
    #[error("cannot run `{command}`: {message}")]
    Spawn { command: String, message: String },
    /// A vendor library call failed or panicked.
    #[error("{what}: {message}")]
    Library { what: String, message: String },
    /// This mode cannot observe that (e.g. commands under `--root`).
    #[error("{what} is not observed when reading a plain root directory")]
    NotObserved { what: String },
    /// A replayed capture has no record of this question.
    #[error("{what} is not in the capture")]
    NotCaptured { what: String },
    /// A file was read but its contents make no sense.
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

/// How a [`Host`] reaches the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// The machine this process runs on.
    Live,
    /// A plain directory treated as `/`: files only.
    Root,
    /// A capture directory.
    Replay,
}

/// What kind of thing a path is (after following symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Dir,
    CharDevice,
    Other,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

/// Options for a live host.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Files are read under this directory (default `/`).
    pub root: PathBuf,
    /// How long one command may run.
    pub command_timeout: Duration,
    /// Replaces the process environment (tests); `None` reads the real one.
    pub env: Option<BTreeMap<String, String>>,
    /// Where ELF summaries of large libraries are cached (see [`elf_cache`]); `None`
    /// parses every time.
    pub elf_cache: Option<PathBuf>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            root: PathBuf::from("/"),
            command_timeout: Duration::from_secs(5),
            env: None,
            elf_cache: None,
        }
    }
}

/// The seam: see the module documentation.
#[derive(Debug)]
pub struct Host {
    mode: Mode,
    /// Files are read under here (live root, plain root, or `<capture>/root`).
    root: PathBuf,
    env: EnvRegistry,
    command_timeout: Duration,
    replay: Option<Journal>,
    recorder: Option<Mutex<capture::Recorder>>,
    elf_cache: Option<PathBuf>,
    /// Path prefixes already found to be no symlink, during one observation
    /// ([`Host::observing`]); `None` outside one.
    resolved: Mutex<Option<paths::Verified>>,
}

impl Host {
    /// The machine this process runs on.
    pub fn live(opts: LiveOptions) -> Host {
        let env = match opts.env {
            Some(map) => EnvRegistry::from_map(map),
            None => EnvRegistry::from_process(),
        };
        Host {
            mode: Mode::Live,
            root: opts.root,
            env,
            command_timeout: opts.command_timeout,
            replay: None,
            recorder: None,
            elf_cache: opts.elf_cache,
            resolved: Mutex::new(None),
        }
    }

    /// A plain directory treated as `/` (a copied root filesystem).
    pub fn root_dir(dir: impl Into<PathBuf>) -> Host {
        Host {
            mode: Mode::Root,
            root: dir.into(),
            env: EnvRegistry::from_map(BTreeMap::new()),
            command_timeout: Duration::from_secs(5),
            replay: None,
            recorder: None,
            elf_cache: None,
            resolved: Mutex::new(None),
        }
    }

    /// A capture directory written by [`Host::write_capture`].
    pub fn replay(dir: impl AsRef<Path>) -> Result<Host, HostError> {
        let dir = dir.as_ref();
        let journal = Journal::load(dir)?;
        Ok(Host {
            mode: Mode::Replay,
            root: dir.join("root"),
            env: EnvRegistry::from_map(journal.env.clone()),
            command_timeout: Duration::from_secs(5),
            replay: Some(journal),
            recorder: None,
            elf_cache: None,
            resolved: Mutex::new(None),
        })
    }

    /// Makes this (live) host record everything it observes.
    pub fn recording(mut self) -> Host {
        self.recorder = Some(Mutex::new(capture::Recorder::default()));
        self
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// Runs `f` as one observation of the machine: within it, a path prefix
    /// found to be a plain directory (no symlink) is not `lstat`ed again by
    /// [`Host::canonicalize`] (hundreds of library paths share a few
    /// directories). Outside it every resolution asks the filesystem.
    pub fn observing<T>(&self, f: impl FnOnce() -> T) -> T {
        /// Forgets what was remembered when the observation ends, even by a panic.
        struct Forget<'a>(&'a Mutex<Option<paths::Verified>>);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
        }
        *self.resolved.lock().unwrap_or_else(|p| p.into_inner()) = Some(Default::default());
        let _forget = Forget(&self.resolved);
        f()
    }

    fn resolve(&self, path: &str) -> Result<Option<String>, HostError> {
        paths::resolve_remembering(&self.root, path, &self.resolved)
    }

    /// The directory files are read under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The environment registry.
    pub fn env(&self) -> &EnvRegistry {
        &self.env
    }

    /// Reads a whole file (up to [`MAX_READ_BYTES`]).
    pub fn read(&self, path: &str) -> Result<Option<Vec<u8>>, HostError> {
        if let Some(j) = &self.replay {
            return match j.files.get(path) {
                Some(Recorded::Ok(_)) => read_real(&self.root, path)
                    .and_then(|o| {
                        o.ok_or_else(|| HostError::NotCaptured {
                            what: format!("contents of {path}"),
                        })
                    })
                    .map(Some),
                Some(Recorded::Absent) => Ok(None),
                Some(Recorded::Failed(e)) => Err(e.clone()),
                None => Err(HostError::NotCaptured {
                    what: format!("file {path}"),
                }),
            };
        }
        let out = read_real(&self.root, path);
        self.record(|r| r.file(path, &out));
        out
    }

    /// Reads a file as text (invalid UTF-8 is replaced).
    pub fn read_string(&self, path: &str) -> Result<Option<String>, HostError> {
        Ok(self.read(path)?.map(text_of))
    }

    /// Lists a directory, sorted by name.
    pub fn list(&self, dir: &str) -> Result<Option<Vec<DirEntry>>, HostError> {
        if let Some(j) = &self.replay {
            return j.lists.get(dir).cloned().map_or_else(
                || {
                    Err(HostError::NotCaptured {
                        what: format!("listing of {dir}"),
                    })
                },
                Recorded::into_result,
            );
        }
        let out = list_real(&self.root, dir);
        self.record(|r| {
            r.lists.insert(dir.to_string(), Recorded::from_result(&out));
        });
        out
    }

    /// The names in directory `dir` of the live machine (its `/`, nothing recorded or
    /// replayed), in ASCII lower case, for the loader model to skip candidates that cannot
    /// exist without a syscall each (lower case, so that a case-insensitive mount such as
    /// WSL's `/mnt/c` never hides a file: a name that matches only in case is resolved);
    /// an absent directory has none; `None` when it cannot be listed or when this host is
    /// not the live, unrecorded machine.
    pub(crate) fn live_names_in(&self, dir: &str) -> Option<Names> {
        if self.replay.is_some()
            || self.recorder.is_some()
            || !matches!(self.mode, Mode::Live)
            || self.root != Path::new("/")
        {
            return None;
        }
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                use std::os::unix::ffi::OsStrExt;
                let mut names = Names::default();
                for e in rd {
                    // An entry that cannot be read leaves the listing unknown.
                    names.insert(e.ok()?.file_name().as_bytes());
                }
                Some(names)
            }
            Err(e) if is_absent(&e) => Some(Default::default()),
            Err(_) => None,
        }
    }

    /// Resolves symlinks (inside the root) to the real path, or `None` if absent.
    pub fn canonicalize(&self, path: &str) -> Result<Option<String>, HostError> {
        if let Some(j) = &self.replay {
            return j.canon.get(path).cloned().map_or_else(
                || {
                    Err(HostError::NotCaptured {
                        what: format!("resolution of {path}"),
                    })
                },
                Recorded::into_result,
            );
        }
        let out = self.resolve(path);
        self.record(|r| {
            r.canon
                .insert(path.to_string(), Recorded::from_result(&out));
        });
        out
    }

    /// Whether a path exists (following symlinks inside the root).
    pub fn exists(&self, path: &str) -> Result<bool, HostError> {
        Ok(self.canonicalize(path)?.is_some())
    }

    /// Reads what gpukb needs from an ELF shared object (sonames, search
    /// paths, the GPU code in its fatbin). Large files are memory-mapped, and
    /// a capture stores the summary, not the file.
    pub fn elf(&self, path: &str) -> Result<Option<crate::elf::ElfInfo>, HostError> {
        if let Some(j) = &self.replay {
            return j.elf.get(path).cloned().map_or_else(
                || {
                    Err(HostError::NotCaptured {
                        what: format!("ELF summary of {path}"),
                    })
                },
                Recorded::into_result,
            );
        }
        let out = self.elf_real(path);
        self.record(|r| {
            r.elf.insert(path.to_string(), Recorded::from_result(&out));
        });
        out
    }

    fn elf_real(&self, path: &str) -> Result<Option<crate::elf::ElfInfo>, HostError> {
        let Some(real) = self.resolve(path)? else {
            return Ok(None);
        };
        let full = paths::under_root(&self.root, &real);
        let file = match std::fs::File::open(&full) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path, &e)),
        };
        let cache = match (&self.elf_cache, file.metadata()) {
            (Some(dir), Ok(m)) if m.len() >= elf_cache::MIN_CACHED_SIZE => {
                Some((dir, elf_cache::key(&full, &m)))
            }
            _ => None,
        };
        if let Some(hit) = cache.as_ref().and_then(|(d, k)| elf_cache::get(d, k)) {
            return Ok(Some(hit));
        }
        // SAFETY: the map is read-only and dropped before returning; a file
        // truncated underneath us can at worst fault this process, the same
        // risk every ELF tool takes.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_err(path, &e))?;
        let info = crate::elf::parse_elf_file(&map, &file).map_err(|message| HostError::Parse {
            path: path.to_string(),
            message,
        })?;
        if let Some((d, k)) = &cache {
            elf_cache::put(d, k, &info);
        }
        Ok(Some(info))
    }

    /// The ELF identification of a file (its first bytes: class, machine,
    /// type), as the dynamic loader checks a candidate; `Ok(None)` when the
    /// file is not ELF, `Err` when it is absent or unreadable. A replayed
    /// capture answers from what was recorded, or from the file's ELF
    /// summary; a summary written before gpukb recorded the header gives
    /// class 0 ("not recorded", which the loader model takes to match).
    pub fn elf_ident(&self, path: &str) -> Result<Option<crate::elf::ElfIdent>, HostError> {
        let key = format!("elf ident {path}");
        if let Some(j) = &self.replay {
            if let Some(rec) = j.answers.get(&key) {
                return match rec.clone().into_result()? {
                    Some(v) => serde_json::from_value(v).map_err(|e| HostError::Parse {
                        path: key,
                        message: e.to_string(),
                    }),
                    None => Ok(None),
                };
            }
            return Ok(self.elf(path)?.map(|i| {
                i.ident.unwrap_or(crate::elf::ElfIdent {
                    class: 0,
                    machine: 0,
                    kind: 0,
                })
            }));
        }
        let out = self.elf_ident_real(path);
        self.record(|r| {
            let rec = match &out {
                Ok(v) => Recorded::Ok(serde_json::to_value(v).unwrap_or_default()),
                Err(e) => Recorded::Failed(e.clone()),
            };
            r.answers.insert(key.clone(), rec);
        });
        out
    }

    fn elf_ident_real(&self, path: &str) -> Result<Option<crate::elf::ElfIdent>, HostError> {
        let Some(real) = self.resolve(path)? else {
            return Err(HostError::Io {
                path: path.into(),
                message: "no such file".into(),
            });
        };
        let full = paths::under_root(&self.root, &real);
        let mut f = std::fs::File::open(&full).map_err(|e| io_err(path, &e))?;
        let mut head = [0u8; 64];
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => return Err(io_err(path, &e)),
            }
        }
        Ok(crate::elf::parse_ident(&head[..n]))
    }

    /// Runs a command with the host's timeout. `Ok(None)` when the program
    /// is not installed.
    pub fn run(&self, argv: &[&str]) -> Result<Option<CommandOutput>, HostError> {
        let key = argv.join(" ");
        match self.mode {
            Mode::Root => {
                return Err(HostError::NotObserved {
                    what: format!("`{key}`"),
                })
            }
            Mode::Replay => {
                let j = self.replay.as_ref().expect("replay host has a journal");
                return j.commands.get(&key).cloned().map_or_else(
                    || {
                        Err(HostError::NotCaptured {
                            what: format!("`{key}`"),
                        })
                    },
                    Recorded::into_result,
                );
            }
            Mode::Live => {}
        }
        let out = runner::run(argv, &self.env, self.command_timeout);
        self.record(|r| {
            r.commands.insert(key.clone(), Recorded::from_result(&out));
        });
        out
    }

    /// Asks a vendor library a question (NVML, CUDA driver API, the C
    /// library). `live` runs on its own thread and is abandoned after
    /// `deadline`; a panic inside it becomes an error. The answer is
    /// recorded under `key` when capturing and replayed from there.
    pub fn answer<T, F>(
        &self,
        key: &str,
        deadline: Duration,
        live: F,
    ) -> Result<Option<T>, HostError>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
        F: FnOnce() -> Result<Option<T>, HostError> + Send + 'static,
    {
        match self.mode {
            Mode::Root => {
                return Err(HostError::NotObserved {
                    what: key.to_string(),
                })
            }
            Mode::Replay => {
                let j = self.replay.as_ref().expect("replay host has a journal");
                return match j.answers.get(key) {
                    None => Err(HostError::NotCaptured {
                        what: key.to_string(),
                    }),
                    Some(Recorded::Ok(v)) => {
                        serde_json::from_value(v.clone())
                            .map(Some)
                            .map_err(|e| HostError::Parse {
                                path: format!("capture answer {key}"),
                                message: e.to_string(),
                            })
                    }
                    Some(Recorded::Absent) => Ok(None),
                    Some(Recorded::Failed(e)) => Err(e.clone()),
                };
            }
            Mode::Live => {}
        }
        let out = with_deadline(key, deadline, live);
        self.record(|r| {
            let rec = match &out {
                Ok(Some(v)) => match serde_json::to_value(v) {
                    Ok(v) => Recorded::Ok(v),
                    Err(e) => Recorded::Failed(HostError::Parse {
                        path: key.to_string(),
                        message: e.to_string(),
                    }),
                },
                Ok(None) => Recorded::Absent,
                Err(e) => Recorded::Failed(e.clone()),
            };
            r.answers.insert(key.to_string(), rec);
        });
        out
    }

    /// The records of the kernel log's ring buffer (`/dev/kmsg`) that `keep`
    /// accepts, read until its end or `deadline`. Recorded in a capture (only
    /// the kept records) and replayed from there; a plain root directory has
    /// no kernel log (`NotObserved`). `Ok(None)`: there is no `/dev/kmsg`.
    pub fn kernel_log(
        &self,
        keep: fn(&str) -> bool,
        deadline: Duration,
    ) -> Result<Option<KmsgRecords>, HostError> {
        let root = self.root.clone();
        let budget = deadline.mul_f64(0.9);
        self.answer("kernel_log", deadline, move || {
            kmsg::read(&root, keep, budget)
        })
    }

    /// Writes everything this recording host observed as a capture directory.
    pub fn write_capture(&self, dir: &Path) -> Result<(), HostError> {
        self.capture()?.write(dir)
    }

    /// Everything this recording host observed, as a capture in memory.
    pub fn capture(&self) -> Result<CaptureData, HostError> {
        let Some(rec) = &self.recorder else {
            return Err(HostError::NotObserved {
                what: "a capture (the host was not recording)".into(),
            });
        };
        let rec = rec.lock().unwrap_or_else(|p| p.into_inner());
        Ok(rec.to_capture(&self.env))
    }

    /// The journal of a replayed capture (when and by which gpukb it was taken).
    pub fn journal(&self) -> Option<&Journal> {
        self.replay.as_ref()
    }

    fn record(&self, f: impl FnOnce(&mut capture::Recorder)) {
        if let Some(r) = &self.recorder {
            let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut r);
        }
    }
}

/// Runs gpukb itself (`/proc/self/exe`) with `args`, under `timeout`: for calls that
/// must load a library gpukb's own process should not (a child that crashes or
/// hangs costs only itself). Live only; callers record the answer through
/// [`Host::answer`].
pub fn run_self(args: &[&str], timeout: Duration) -> Result<runner::CommandOutput, HostError> {
    let exe = std::env::current_exe().map_err(|e| HostError::Spawn {
        command: "gpukb (its own executable)".into(),
        message: e.to_string(),
    })?;
    let exe = exe.to_string_lossy().into_owned();
    let mut argv = vec![exe.as_str()];
    argv.extend_from_slice(args);
    runner::run(&argv, &EnvRegistry::from_map(BTreeMap::new()), timeout)?.ok_or_else(|| {
        HostError::Spawn {
            command: exe.clone(),
            message: "gpukb's own executable is not a file".into(),
        }
    })
}

/// gpukb's own `/proc/self/maps` (which files this process mapped), or `None` off Linux.
#[allow(clippy::disallowed_methods)] // gpukb's own process, not the machine under study
pub fn own_maps() -> Option<String> {
    std::fs::read_to_string("/proc/self/maps").ok()
}

/// Runs `f` on its own thread; gives up after `deadline`.
pub fn with_deadline<T, F>(what: &str, deadline: Duration, f: F) -> Result<Option<T>, HostError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<Option<T>, HostError> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let name = what.to_string();
    let spawned = std::thread::Builder::new()
        .name(format!("gpukb:{what}"))
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panicked".into());
                Err(HostError::Library {
                    what: name,
                    message: msg,
                })
            });
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Err(HostError::Library {
            what: what.into(),
            message: format!("cannot start a thread: {e}"),
        });
    }
    match rx.recv_timeout(deadline) {
        Ok(r) => r,
        Err(_) => Err(HostError::Timeout {
            what: what.into(),
            seconds: deadline.as_secs_f64(),
        }),
    }
}

fn io_err(path: &str, e: &std::io::Error) -> HostError {
    HostError::Io {
        path: path.to_string(),
        message: e.to_string(),
    }
}

/// `O_NONBLOCK` (the same value on x86-64 and aarch64 Linux): opening a FIFO
/// that appeared between the type check and the open must not block.
const O_NONBLOCK: i32 = 0o4000;

fn read_real(root: &Path, path: &str) -> Result<Option<Vec<u8>>, HostError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // Resolve symlinks as the machine would (an absolute target inside a
    // copied root stays inside it), then open only a regular file: a FIFO,
    // socket or device node inside a root or capture would block or never end.
    let full = if root == Path::new("/") {
        paths::under_root(root, path)
    } else {
        match paths::resolve(root, path)? {
            Some(real) => paths::under_root(root, &real),
            None => return Ok(None),
        }
    };
    let meta = match std::fs::metadata(&full) {
        Ok(m) => m,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(io_err(path, &e)),
    };
    let ft = meta.file_type();
    if !ft.is_file() {
        let what = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a named pipe (FIFO)"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_block_device() || ft.is_char_device() {
            "a device node"
        } else {
            "not a regular file"
        };
        return Err(HostError::Io {
            path: path.into(),
            message: format!("is {what}, not a regular file: not read"),
        });
    }
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(&full)
    {
        Ok(f) => f,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(io_err(path, &e)),
    };
    let meta = f.metadata().map_err(|e| io_err(path, &e))?;
    if !meta.is_file() {
        return Err(HostError::Io {
            path: path.into(),
            message: "changed into a non-regular file while being opened: not read".into(),
        });
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(HostError::TooLarge {
            path: path.into(),
            size: meta.len(),
        });
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // /proc and /sys files report size 0 or 4096: read to the end, capped.
    f.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| io_err(path, &e))?;
    if buf.len() as u64 > MAX_READ_BYTES {
        return Err(HostError::TooLarge {
            path: path.into(),
            size: buf.len() as u64,
        });
    }
    Ok(Some(buf))
}

/// The names of one directory (the loader model's `ObjectFs::names_in`), kept as FNV-1a
/// hashes of their ASCII lower case: enough to say a name is surely absent, which is all the
/// loader model asks (a name whose hash is present is resolved for real, so a collision only
/// costs one lookup). Holding hashes, not strings, saves an allocation and a free for each of
/// the thousands of entries of a system library directory.
#[derive(Debug, Clone, Default)]
pub struct Names(std::collections::HashSet<u64, std::hash::BuildHasherDefault<NameHasher>>);

impl Names {
    /// [`NameHasher`] (FNV-1a) of `name` in ASCII lower case.
    fn key(name: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = NameHasher::default();
        for b in name {
            h.write(&[b.to_ascii_lowercase()]);
        }
        h.finish()
    }

    /// Adds a directory entry's name (raw bytes, any case).
    pub fn insert(&mut self, name: &[u8]) {
        self.0.insert(Self::key(name));
    }

    /// Whether `name` (any ASCII case) may be one of the names: `false` means it surely
    /// is not.
    pub fn may_contain(&self, name: &str) -> bool {
        self.0.contains(&Self::key(name.as_bytes()))
    }
}

/// FNV-1a over the names and paths the loader model looks up (a directory's entries, the
/// directories listed, the path prefixes known to be real). The default SipHash took about
/// 6 % of the samples of modelling `import torch` (perf on the build VM: thousands of names
/// in a system library directory); a collision here only slows one lookup, so a keyed hash
/// buys nothing.
#[derive(Debug, Clone, Copy)]
pub struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Bytes as text, without a copy when they are UTF-8 already (almost always: validating
/// is several times cheaper than the lossy scan, which took 1.2 M of the 25 M instructions
/// of `fingerprint --cheap` on the build VM, a 133 kB `torch/__init__.py` among its files).
fn text_of(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

fn list_real(root: &Path, dir: &str) -> Result<Option<Vec<DirEntry>>, HostError> {
    // Inside a copied root the directory's own path resolves inside the root
    // too (an absolute `opt -> /data/opt` link must not list the host's).
    let full = if root == Path::new("/") {
        paths::under_root(root, dir)
    } else {
        match paths::resolve(root, dir)? {
            Some(real) => paths::under_root(root, &real),
            None => return Ok(None),
        }
    };
    let rd = match std::fs::read_dir(&full) {
        Ok(rd) => rd,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(io_err(dir, &e)),
    };
    let mut out = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| io_err(dir, &e))?;
        let name = ent.file_name().to_string_lossy().into_owned();
        // The directory itself is resolved, so an entry that is not a symlink is what
        // readdir says it is (no syscall); a symlink is followed inside the root, not on
        // the host.
        let kind = match ent.file_type() {
            Ok(t) if !t.is_symlink() => kind_of(t),
            _ => {
                let child = format!("{}/{}", dir.trim_end_matches('/'), name);
                match paths::resolve(root, &child) {
                    Ok(Some(real)) => match std::fs::metadata(paths::under_root(root, &real)) {
                        Ok(m) => kind_of(m.file_type()),
                        Err(_) => EntryKind::Other,
                    },
                    _ => EntryKind::Other,
                }
            }
        };
        out.push(DirEntry { name, kind });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Some(out))
}

fn kind_of(t: std::fs::FileType) -> EntryKind {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        EntryKind::Dir
    } else if t.is_file() {
        EntryKind::File
    } else if t.is_char_device() {
        EntryKind::CharDevice
    } else {
        EntryKind::Other
    }
}
