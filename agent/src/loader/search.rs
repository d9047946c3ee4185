//! The search itself: glibc 2.36 `_dl_map_object` (elf/dl-load.c) for one
//! name, `_dl_map_object_deps` (elf/dl-deps.c) for an object's `NEEDED`
//! entries, and the start-up order of elf/rtld.c `dl_main` (`LD_PRELOAD`,
//! then `/etc/ld.so.preload`, then the executable's dependencies).

use super::{absolute, dirname, LoadRule, LoaderEnvironment, ObjectFs, Rules, Target};
use crate::elf::{ElfInfo, DF_1_NODEFLIB};
use crate::host::HostError;
use crate::parse::ld_cache::CacheEntry;
use std::collections::VecDeque;

/// Why an object was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// The program itself.
    Executable,
    /// The dynamic loader (`PT_INTERP`).
    Interpreter,
    /// `LD_PRELOAD` or `/etc/ld.so.preload`.
    Preload,
    /// A `DT_NEEDED` entry of another object.
    Needed,
    /// A `dlopen` call.
    Dlopen,
}

/// One object of the link map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// `l_name`: the path the loader opened ("" for the executable).
    pub name: String,
    /// Its real path.
    pub real: String,
    /// The names it was asked for by (`l_libname`), and its `DT_SONAME` once matched.
    pub names: Vec<String>,
    /// Why it is loaded: [`LoadRule::Preload`] for a preload, else the step
    /// that found it.
    pub rule: LoadRule,
    /// The search step that found it (for a preload: where the name was found).
    pub found_by: LoadRule,
    /// The directory, cache entry or element that matched, in words.
    pub source: String,
    /// Why it was asked for.
    pub request: Request,
    /// `l_loader`: the object whose `NEEDED` entry loaded it; `None` for what
    /// `dlopen` loaded (dl-load.c `_dl_map_object`: "In case the LOADER
    /// information has only been provided to get to the appropriate
    /// RUNPATH/RPATH information we do not need it anymore", `__RTLD_CALLMAP`),
    /// so the RPATH chain of its own dependencies stops at it.
    pub loader: Option<usize>,
    /// The object whose `NEEDED` entry or `dlopen` call asked for it first.
    pub requested_by: Option<usize>,
    info: ElfInfo,
    /// `l_origin`: the directory `$ORIGIN` expands to.
    origin: String,
    /// Its expanded `DT_RPATH` and `DT_RUNPATH` directories, worked out on the first
    /// search that needs them (`fillin_rpath` runs once per object in glibc too).
    dirs: SearchDirs,
}

/// An object's expanded `DT_RPATH` (0) and `DT_RUNPATH` (1) directories, once computed.
/// Not part of what the object is: equal whatever has been computed.
#[derive(Debug, Clone, Default)]
struct SearchDirs([std::cell::OnceCell<Option<Vec<String>>>; 2]);

impl PartialEq for SearchDirs {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SearchDirs {}

impl Loaded {
    /// Its `DT_SONAME`.
    pub fn soname(&self) -> Option<&str> {
        self.info.soname.as_deref()
    }
}

/// Why a load failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// No file of that name in any place searched (`cannot open shared object file`).
    #[error("{name}: not found (needed by {by})")]
    NotFound { name: String, by: String },
    /// Only files of another ELF class were found (`wrong ELF class: ELFCLASS32`).
    #[error("{name}: only files of another ELF class were found (needed by {by})")]
    WrongClass { name: String, by: String },
    /// A file was found but the loader rejects it (`invalid ELF header`, not `ET_DYN`).
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    /// The file could not be read.
    #[error(transparent)]
    Unreadable(#[from] HostError),
}

/// What one search found: `l_name`, real path, rule and source.
type Found = (String, String, LoadRule, String);

/// One step of the search for a name without `/`.
type Step<'a, F> =
    fn(&Process<'a, F>, Option<usize>, &str, bool) -> Result<Option<Found>, LoadError>;

/// A process, as the loader model sees it: its link map after start-up and
/// each `dlopen`.
pub struct Process<'a, F: ObjectFs> {
    fs: &'a F,
    target: &'a Target,
    env: &'a LoaderEnvironment,
    cache: &'a [CacheEntry],
    rules: Rules,
    /// The link map, in load order: the executable first.
    pub objects: Vec<Loaded>,
    /// `LD_LIBRARY_PATH`'s directories (`__rtld_env_path_list`).
    env_dirs: Vec<String>,
    /// Every name resolved, in order: (name, how, object), also those of a
    /// failed `dlopen` that was undone.
    pub resolutions: Vec<(String, LoadRule, usize)>,
    /// Names not found, with the object that asked (only when keeping going).
    pub missing: Vec<(String, String)>,
    /// Whether a missing dependency is recorded and skipped instead of failing
    /// the load (what the process would load if that file were there).
    keep_going: bool,
    /// Whether the current search met a file of another ELF class
    /// (`found_other_class`).
    other_class: std::cell::Cell<bool>,
    /// The target's hwcaps subdirectories, each ending in `/`, then "" (computed once).
    subdirs: Vec<String>,
    /// The default directories, each ending in `/` (computed once).
    default_dirs: Vec<String>,
    /// The names of each directory searched, where the filesystem lists them
    /// ([`ObjectFs::names_in`]): a candidate absent from its directory's names is
    /// skipped without resolving it (torch's RUNPATH alone names a dozen directories,
    /// each tried with every hwcaps subdirectory for every library).
    listed: std::cell::RefCell<
        std::collections::HashMap<
            String,
            Option<super::Names>,
            std::hash::BuildHasherDefault<super::NameHasher>,
        >,
    >,
}

impl<'a, F: ObjectFs> Process<'a, F> {
    /// Starts `exe` (elf/rtld.c `dl_main`): the executable and the loader,
    /// the preloads (a preload that is not found is skipped, as ld.so does
    /// with "cannot be preloaded … ignored"), then every object's `NEEDED`
    /// entries breadth-first. Fails when a dependency is missing.
    pub fn start(
        fs: &'a F,
        target: &'a Target,
        env: &'a LoaderEnvironment,
        cache: &'a [CacheEntry],
        rules: Rules,
        exe: &str,
    ) -> Result<Self, LoadError> {
        Self::start_with(fs, target, env, cache, rules, Some(exe), false)
    }

    /// [`Process::start`]; with no `exe`, an executable without `NEEDED`,
    /// `RPATH` or `RUNPATH` stands in. With `keep_going`, a missing
    /// dependency is recorded in [`Process::missing`] and skipped.
    pub fn start_with(
        fs: &'a F,
        target: &'a Target,
        env: &'a LoaderEnvironment,
        cache: &'a [CacheEntry],
        rules: Rules,
        exe: Option<&str>,
        keep_going: bool,
    ) -> Result<Self, LoadError> {
        let mut p = Process {
            fs,
            target,
            env,
            cache,
            rules,
            objects: Vec::new(),
            env_dirs: Vec::new(),
            resolutions: Vec::new(),
            missing: Vec::new(),
            keep_going,
            other_class: Default::default(),
            subdirs: target.subdirs(),
            default_dirs: target.default_dirs.iter().map(|d| slash(d)).collect(),
            listed: Default::default(),
        };
        let (real, info) = match exe {
            Some(exe) => {
                let real =
                    fs.realpath(&absolute(&env.cwd, exe))?
                        .ok_or_else(|| LoadError::NotFound {
                            name: exe.into(),
                            by: "the shell".into(),
                        })?;
                let info = p.dynamic(&real)?;
                (real, info)
            }
            None => (String::new(), ElfInfo::default()),
        };
        let exe = exe.unwrap_or("");
        // The executable's origin comes from /proc/self/exe: its real path
        // (elf/dl-origin.c `_dl_get_origin`).
        p.objects.push(Loaded {
            name: String::new(),
            origin: dirname(&real),
            real,
            names: vec![String::new()],
            rule: LoadRule::Path,
            found_by: LoadRule::Path,
            source: exe.into(),
            request: Request::Executable,
            loader: None,
            requested_by: None,
            info,
            dirs: SearchDirs::default(),
        });
        let ld_real = fs
            .realpath(&target.ld_so)?
            .unwrap_or_else(|| target.ld_so.clone());
        let ld_info = p.dynamic(&ld_real).unwrap_or_default();
        p.objects.push(Loaded {
            name: target.ld_so.clone(),
            origin: dirname(&target.ld_so),
            names: ld_info.soname.iter().cloned().collect(),
            real: ld_real,
            rule: LoadRule::Path,
            found_by: LoadRule::Path,
            source: "PT_INTERP".into(),
            request: Request::Interpreter,
            loader: None,
            requested_by: None,
            info: ld_info,
            dirs: SearchDirs::default(),
        });
        p.env_dirs = p.ld_library_path();
        let mut roots = vec![0];
        for name in p.preload_names() {
            if let Ok(i) = p.map(Some(0), &name, Request::Preload, true) {
                roots.push(i);
            }
        }
        p.deps(roots)?;
        Ok(p)
    }

    /// Whether a missing dependency is skipped (recorded in
    /// [`Process::missing`]) rather than failing the load.
    pub fn set_keep_going(&mut self, on: bool) {
        self.keep_going = on;
    }

    /// `LD_PRELOAD` (split at spaces and colons, elf/rtld.c
    /// `handle_preload_list`; in secure execution names with `/` are dropped,
    /// `dso_name_valid_for_suid`), then `/etc/ld.so.preload` (split at
    /// spaces, tabs, newlines and colons, `#` starting a comment).
    fn preload_names(&self) -> Vec<String> {
        if !self.rules.has(LoadRule::Preload) {
            return Vec::new();
        }
        let mut out: Vec<String> = Vec::new();
        if let Some(v) = &self.env.ld_preload {
            out.extend(
                v.split([' ', ':'])
                    .filter(|n| !n.is_empty())
                    .filter(|n| !(self.env.secure && n.contains('/')))
                    .map(String::from),
            );
        }
        if let Some(f) = &self.env.preload_file {
            for line in f.lines() {
                let line = line.split('#').next().unwrap_or("");
                out.extend(
                    line.split([' ', '\t', ':'])
                        .filter(|n| !n.is_empty())
                        .map(String::from),
                );
            }
        }
        out
    }

    /// `dlopen(name)` called from object `caller` (elf/dl-open.c
    /// `dl_open_worker`: the caller is the loader). On failure every object
    /// it loaded is unloaded again, as `dlopen` does.
    pub fn dlopen(&mut self, caller: usize, name: &str) -> Result<usize, LoadError> {
        let before = self.objects.len();
        let r = self
            .map(Some(caller), name, Request::Dlopen, false)
            .and_then(|i| self.deps(vec![i]).map(|_| i));
        if r.is_err() {
            self.objects.truncate(before);
        }
        r
    }

    /// Loads every `NEEDED` entry of `roots` and of what they load,
    /// breadth-first (elf/dl-deps.c `_dl_map_object_deps`).
    fn deps(&mut self, roots: Vec<usize>) -> Result<(), LoadError> {
        let mut queue: VecDeque<usize> = roots.into();
        let mut seen: Vec<usize> = queue.iter().copied().collect();
        while let Some(i) = queue.pop_front() {
            for name in self.objects[i].info.needed.clone() {
                let j = match self.map(Some(i), &name, Request::Needed, false) {
                    Err(LoadError::NotFound { name, by } | LoadError::WrongClass { name, by })
                        if self.keep_going =>
                    {
                        self.missing.push((name, by));
                        continue;
                    }
                    r => r?,
                };
                if !seen.contains(&j) {
                    seen.push(j);
                    queue.push_back(j);
                }
            }
        }
        Ok(())
    }

    /// `_dl_map_object`: an already loaded object of that name or soname, or
    /// the file the search finds (an object already loaded from that file is
    /// reused, dl-load.c "Look again to see if the real name matched").
    fn map(
        &mut self,
        loader: Option<usize>,
        name: &str,
        request: Request,
        secure_mode: bool,
    ) -> Result<usize, LoadError> {
        if self.rules.has(LoadRule::AlreadyLoaded) {
            if let Some(i) = self.loaded_as(name) {
                self.resolutions
                    .push((name.into(), LoadRule::AlreadyLoaded, i));
                return Ok(i);
            }
        }
        self.other_class.set(false);
        let Some((l_name, real, rule, source)) = self.find(loader, name, secure_mode)? else {
            let by = loader.map_or("the program".into(), |l| self.display(l));
            let name = name.to_string();
            return Err(if self.other_class.get() {
                LoadError::WrongClass { name, by }
            } else {
                LoadError::NotFound { name, by }
            });
        };
        if self.rules.has(LoadRule::AlreadyLoaded) {
            if let Some(i) = self.objects.iter().position(|o| o.real == real) {
                self.objects[i].names.push(name.into());
                self.resolutions
                    .push((name.into(), LoadRule::AlreadyLoaded, i));
                return Ok(i);
            }
        }
        let info = self.dynamic(&real)?;
        self.objects.push(Loaded {
            origin: dirname(&absolute(&self.env.cwd, &l_name)),
            name: l_name,
            real,
            names: vec![name.into()],
            rule: if request == Request::Preload {
                LoadRule::Preload
            } else {
                rule
            },
            found_by: rule,
            source,
            request,
            loader: if request == Request::Dlopen {
                None
            } else {
                loader
            },
            requested_by: loader,
            info,
            dirs: SearchDirs::default(),
        });
        let i = self.objects.len() - 1;
        self.resolutions
            .push((name.into(), self.objects[i].rule, i));
        Ok(i)
    }

    /// dl-load.c: "Look for this name among those already loaded": `l_name`,
    /// the names it was loaded by, or its `DT_SONAME`.
    fn loaded_as(&mut self, name: &str) -> Option<usize> {
        let i = self.objects.iter().position(|o| {
            o.name == name || o.names.iter().any(|n| n == name) || o.soname() == Some(name)
        })?;
        if !self.objects[i].names.iter().any(|n| n == name) {
            self.objects[i].names.push(name.into());
        }
        Some(i)
    }

    fn display(&self, i: usize) -> String {
        match &self.objects[i] {
            o if o.name.is_empty() => o.real.clone(),
            o => o.name.clone(),
        }
    }

    fn dynamic(&self, real: &str) -> Result<ElfInfo, LoadError> {
        match self.fs.dynamic(real) {
            Err(_) if self.keep_going => Ok(ElfInfo::default()),
            Ok(Some(info)) => Ok(info),
            Ok(None) => Err(LoadError::Invalid {
                path: real.into(),
                reason: "vanished while being read".into(),
            }),
            Err(HostError::Parse { message, .. }) => Err(LoadError::Invalid {
                path: real.into(),
                reason: message,
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// The search of `_dl_map_object` for `name` requested by `loader`.
    fn find(
        &self,
        loader: Option<usize>,
        name: &str,
        secure_mode: bool,
    ) -> Result<Option<Found>, LoadError> {
        if name.contains('/') {
            // "The path may contain dynamic string tokens."
            if !self.rules.has(LoadRule::Path) {
                return Ok(None);
            }
            let path = match loader {
                Some(l) => match self.expand(l, name) {
                    Some(p) => p,
                    None => return Ok(None),
                },
                None => name.to_string(),
            };
            let path = absolute(&self.env.cwd, &path);
            return Ok(self
                .verify(&path)?
                .map(|real| (path.clone(), real, LoadRule::Path, path)));
        }
        let steps: [(LoadRule, Step<'a, F>); 5] = [
            (LoadRule::Rpath, Self::find_rpath),
            (LoadRule::LdLibraryPath, Self::find_env),
            (LoadRule::Runpath, Self::find_runpath),
            (LoadRule::Cache, Self::find_cache),
            (LoadRule::Default, Self::find_default),
        ];
        for (rule, step) in steps {
            if self.rules.has(rule) {
                if let Some(f) = step(self, loader, name, secure_mode)? {
                    return Ok(Some(f));
                }
            }
        }
        Ok(None)
    }

    /// "When the object has the RUNPATH information we don't use any
    /// RPATHs": the `DT_RPATH` of the loader, of its loader and on up, then
    /// of the executable unless already searched (dl-load.c 2032-2080).
    fn find_rpath(
        &self,
        loader: Option<usize>,
        name: &str,
        _: bool,
    ) -> Result<Option<Found>, LoadError> {
        if loader.is_some_and(|l| has_runpath(&self.objects[l].info)) {
            return Ok(None);
        }
        let mut did_main = false;
        let mut l = loader;
        while let Some(i) = l {
            if let Some(dirs) = self.rpath_dirs(i, false) {
                let what = || format!("RPATH of {}", self.display(i));
                if let Some(f) = self.open_path(dirs, name, LoadRule::Rpath, &what)? {
                    return Ok(Some(f));
                }
                did_main |= i == 0;
            }
            l = self.objects[i].loader;
        }
        if !did_main {
            if let Some(dirs) = self.rpath_dirs(0, false) {
                let what = || format!("RPATH of {}", self.display(0));
                return self.open_path(dirs, name, LoadRule::Rpath, &what);
            }
        }
        Ok(None)
    }

    /// "Try the LD_LIBRARY_PATH environment variable."
    fn find_env(&self, _: Option<usize>, name: &str, _: bool) -> Result<Option<Found>, LoadError> {
        self.open_path(&self.env_dirs, name, LoadRule::LdLibraryPath, &|| {
            "LD_LIBRARY_PATH".into()
        })
    }

    /// "Look at the RUNPATH information for this binary": the loader's own
    /// `DT_RUNPATH` only.
    fn find_runpath(
        &self,
        loader: Option<usize>,
        name: &str,
        _: bool,
    ) -> Result<Option<Found>, LoadError> {
        let Some(l) = loader else { return Ok(None) };
        match self.rpath_dirs(l, true) {
            Some(dirs) => {
                let what = || format!("RUNPATH of {}", self.display(l));
                self.open_path(dirs, name, LoadRule::Runpath, &what)
            }
            None => Ok(None),
        }
    }

    /// `/etc/ld.so.cache` (dl-load.c 2111-2168, dl-cache.c `search_cache`):
    /// not for a preload in secure execution; an entry in a system directory
    /// is not used when the loader has `DF_1_NODEFLIB`; a cached file that
    /// fails `open_verify` falls through to the default directories.
    fn find_cache(
        &self,
        loader: Option<usize>,
        name: &str,
        secure_mode: bool,
    ) -> Result<Option<Found>, LoadError> {
        if secure_mode && self.env.secure {
            return Ok(None);
        }
        let Some(entry) = self.cache_lookup(name) else {
            return Ok(None);
        };
        let l = loader.unwrap_or(0);
        if self.objects[l].info.flags_1 & DF_1_NODEFLIB != 0
            && self.target.system_dirs.iter().any(|d| {
                entry
                    .path
                    .starts_with(&format!("{}/", d.trim_end_matches('/')))
            })
        {
            return Ok(None);
        }
        Ok(self.verify(&entry.path)?.map(|real| {
            let source = format!("ld.so.cache {} => {}", entry.soname, entry.path);
            (entry.path.clone(), real, LoadRule::Cache, source)
        }))
    }

    /// `search_cache` (glibc 2.36 elf/dl-cache.c): among the entries of
    /// that name with the loader's flags, the best supported `glibc-hwcaps`
    /// entry (they are listed first), else the first plain entry whose
    /// legacy hwcap bits the loader accepts ([`Target::cache_hwcap_allowed`]).
    fn cache_lookup(&self, name: &str) -> Option<&'a CacheEntry> {
        let mut best: Option<(&CacheEntry, usize)> = None;
        for e in self.cache.iter().filter(|e| e.soname == name) {
            if e.flags != self.target.cache_flags {
                continue;
            }
            if e.is_hwcaps() {
                let prio = e
                    .hwcaps
                    .as_deref()
                    .and_then(|h| self.target.hwcaps.iter().position(|s| s == h));
                match (prio, best) {
                    (None, _) => {}
                    (Some(p), Some((_, b))) if p >= b => {}
                    (Some(p), _) => best = Some((e, p)),
                }
                continue;
            }
            if best.is_some() {
                break;
            }
            if e.hwcap & !self.target.cache_hwcap_allowed != 0 {
                continue;
            }
            return Some(e);
        }
        best.map(|(e, _)| e)
    }

    /// "Finally, try the default path", unless the loader has `DF_1_NODEFLIB`.
    fn find_default(
        &self,
        loader: Option<usize>,
        name: &str,
        _: bool,
    ) -> Result<Option<Found>, LoadError> {
        let l = loader.unwrap_or(0);
        if self.objects[l].info.flags_1 & DF_1_NODEFLIB != 0 {
            return Ok(None);
        }
        self.open_path(&self.default_dirs, name, LoadRule::Default, &|| {
            "default directories".into()
        })
    }

    /// `open_path`: each directory, each hwcaps subdirectory first. `what` names the
    /// directories' origin for the answer (built only for a file found).
    fn open_path(
        &self,
        dirs: &[String],
        name: &str,
        rule: LoadRule,
        what: &dyn Fn() -> String,
    ) -> Result<Option<Found>, LoadError> {
        let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
        // The candidate's folder, built in place (what `absolute(cwd, dir + sub)` gives).
        let mut folder = String::new();
        for dir in dirs {
            for sub in &self.subdirs {
                // The listing of the candidate's folder first: most candidates are
                // absent, and skipping them builds no path (thousands per `import torch`).
                if plain {
                    folder.clear();
                    let starts_absolute =
                        dir.starts_with('/') || (dir.is_empty() && sub.starts_with('/'));
                    if !starts_absolute {
                        folder.push_str(self.env.cwd.trim_end_matches('/'));
                        folder.push('/');
                    }
                    folder.push_str(dir);
                    folder.push_str(sub);
                    let f = folder.trim_end_matches('/');
                    if self.absent_from(if f.is_empty() { "/" } else { f }, name) {
                        continue;
                    }
                }
                let l_name = format!("{dir}{sub}{name}");
                let path = absolute(&self.env.cwd, &l_name);
                if !plain && self.surely_absent(&path) {
                    continue;
                }
                if let Some(real) = self.verify(&path)? {
                    let shown = if dir.is_empty() {
                        "(empty: the working directory)"
                    } else {
                        dir
                    };
                    return Ok(Some((
                        l_name,
                        real,
                        rule,
                        format!("{}: {shown}{sub}", what()),
                    )));
                }
            }
        }
        Ok(None)
    }

    /// `open_verify`: the real path of a loadable file at `path`; `None`
    /// when absent or of another ELF class or machine (not fatal: the search
    /// goes on, dl-load.c 1700-1745; another class is remembered for the
    /// error); an error when it is not an ELF file or not `ET_DYN`/`ET_EXEC`.
    fn verify(&self, path: &str) -> Result<Option<String>, LoadError> {
        let Some(real) = self.fs.realpath(path)? else {
            return Ok(None);
        };
        let ident = match self.fs.ident(&real) {
            // Keeping going, a file whose header cannot be read is taken as it is named.
            Err(_) if self.keep_going => return Ok(Some(real)),
            r => r?,
        };
        match ident {
            // Keeping going (the fingerprint), a file that is not ELF is reported
            // where it is (a placeholder in a copied root), not a failed load.
            None if self.keep_going => Ok(Some(real)),
            None => Err(LoadError::Invalid {
                path: path.into(),
                reason: "invalid ELF header".into(),
            }),
            Some(id) if id.class == 0 => Ok(Some(real)),
            Some(id) if id.class != self.target.class => {
                self.other_class.set(true);
                Ok(None)
            }
            Some(id) if id.machine != self.target.machine => Ok(None),
            Some(id) if id.kind != 2 && id.kind != 3 => Err(LoadError::Invalid {
                path: path.into(),
                reason: "only ET_DYN and ET_EXEC can be loaded".into(),
            }),
            Some(_) => Ok(Some(real)),
        }
    }

    /// Whether the listing of `path`'s directory shows no entry of its name (only
    /// where the filesystem lists directories; otherwise the path is resolved). Used
    /// for the directory searches, where most candidates are absent; a cache entry or
    /// a path is resolved directly.
    fn surely_absent(&self, path: &str) -> bool {
        let Some((dir, name)) = path.rsplit_once('/') else {
            return false;
        };
        if name.is_empty() || name == "." || name == ".." {
            return false;
        }
        self.absent_from(if dir.is_empty() { "/" } else { dir }, name)
    }

    /// Whether the listing of directory `dir` (absolute, no trailing `/` but the root's)
    /// shows no entry `name`; `false` where the filesystem does not list it.
    fn absent_from(&self, dir: &str, name: &str) -> bool {
        let absent =
            |names: &Option<super::Names>| names.as_ref().is_some_and(|n| !n.may_contain(name));
        let mut listed = self.listed.borrow_mut();
        if let Some(names) = listed.get(dir) {
            return absent(names);
        }
        let names = self.fs.names_in(dir);
        let out = absent(&names);
        listed.insert(dir.to_string(), names);
        out
    }

    /// The expanded `DT_RPATH` (or `DT_RUNPATH`) directories of object `i`,
    /// each ending in `/` (dl-load.c `fillin_rpath`: an empty element stays
    /// the working directory, an element whose token cannot be expanded is
    /// dropped); `None` when it has none.
    fn rpath_dirs(&self, i: usize, runpath: bool) -> Option<&[String]> {
        self.objects[i].dirs.0[usize::from(runpath)]
            .get_or_init(|| {
                let info = &self.objects[i].info;
                let raw = if runpath {
                    runpath_of(info)
                } else if has_runpath(info) {
                    None
                } else {
                    rpath_of(info)
                }?;
                if raw.is_empty() {
                    return None;
                }
                Some(self.fill(&raw, &[':'], i))
            })
            .as_deref()
    }

    /// `fillin_rpath` over `raw` split at `seps`, tokens expanded for object `i`.
    fn fill(&self, raw: &str, seps: &[char], i: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for el in raw.split(seps) {
            let dir = if el.is_empty() {
                String::new()
            } else {
                match self.expand(i, el) {
                    Some(d) if !d.is_empty() => slash(&d),
                    _ => continue,
                }
            };
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
        out
    }

    /// `LD_LIBRARY_PATH`, split at `:` and `;`, tokens expanded for the
    /// executable; ignored in secure execution (elf/rtld.c unsets it).
    fn ld_library_path(&self) -> Vec<String> {
        match &self.env.ld_library_path {
            Some(v) if !v.is_empty() && !self.env.secure => self.fill(v, &[':', ';'], 0),
            _ => Vec::new(),
        }
    }

    /// `_dl_dst_substitute`: `$ORIGIN`, `$PLATFORM`, `$LIB` (also in
    /// braces); `None` when a token has no value (`$ORIGIN` not first in
    /// secure execution), so the element is dropped.
    fn expand(&self, i: usize, s: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let token = ["ORIGIN", "PLATFORM", "LIB"].into_iter().find_map(|t| {
                let braced = format!("{{{t}}}");
                if after.starts_with(&braced) {
                    Some((t, braced.len()))
                } else if after.starts_with(t)
                    && !after[t.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    Some((t, t.len()))
                } else {
                    None
                }
            });
            match token {
                Some(("ORIGIN", len)) => {
                    if self.env.secure
                        && !(at == 0 && (after[len..].is_empty() || after[len..].starts_with('/')))
                    {
                        return None;
                    }
                    out.push_str(&self.objects[i].origin);
                    rest = &after[len..];
                }
                Some(("PLATFORM", len)) => {
                    out.push_str(&self.target.platform);
                    rest = &after[len..];
                }
                Some((_, len)) => {
                    out.push_str(&self.target.lib);
                    rest = &after[len..];
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Some(out)
    }
}

/// `DT_RPATH` as written; from the split list in ELF summaries recorded
/// before gpukb kept the raw string (their empty elements are lost).
fn rpath_of(info: &ElfInfo) -> Option<String> {
    info.rpath_raw
        .clone()
        .or_else(|| (!info.rpath.is_empty()).then(|| info.rpath.join(":")))
}

/// Whether the object has a `DT_RUNPATH` ([`runpath_of`] is `Some`).
fn has_runpath(info: &ElfInfo) -> bool {
    info.runpath_raw.is_some() || !info.runpath.is_empty()
}

/// `DT_RUNPATH` as written (see [`rpath_of`]).
fn runpath_of(info: &ElfInfo) -> Option<String> {
    info.runpath_raw
        .clone()
        .or_else(|| (!info.runpath.is_empty()).then(|| info.runpath.join(":")))
}

/// A directory as `fillin_rpath` stores it: trailing slashes removed
/// (except for `/`), then one added.
fn slash(d: &str) -> String {
    let t = d.trim_end_matches('/');
    format!("{t}/")
}
