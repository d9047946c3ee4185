//! Unit tests of the rules the differential test cannot reach on a CI host
//! (secure execution, `/etc/ld.so.preload`, the cache's hwcaps choice,
//! `-z nodefaultlib` against cache entries), on an in-memory filesystem.

use super::*;
use crate::elf::ElfIdent;
use crate::parse::ld_cache::{CacheEntry, HWCAP_EXTENSION};
use std::collections::BTreeMap;

/// Files by path (no symlinks): each an x86-64 shared object with this info.
#[derive(Default)]
struct Fake(BTreeMap<String, ElfInfo>);

impl Fake {
    fn lib(mut self, path: &str, soname: &str) -> Fake {
        let info = ElfInfo {
            soname: Some(soname.into()),
            ..Default::default()
        };
        self.0.insert(path.into(), info);
        self
    }
    fn with(mut self, path: &str, info: ElfInfo) -> Fake {
        self.0.insert(path.into(), info);
        self
    }
}

impl ObjectFs for Fake {
    fn realpath(&self, path: &str) -> Result<Option<String>, HostError> {
        Ok(self.0.contains_key(path).then(|| path.to_string()))
    }
    fn ident(&self, _: &str) -> Result<Option<ElfIdent>, HostError> {
        Ok(Some(ElfIdent {
            class: 2,
            machine: 62,
            kind: 3,
        }))
    }
    fn dynamic(&self, real: &str) -> Result<Option<ElfInfo>, HostError> {
        Ok(self.0.get(real).cloned())
    }
}

fn target() -> Target {
    let mut t = Target::glibc("x86_64", (2, 39), true, &Default::default());
    t.hwcaps = vec!["x86-64-v3".into(), "x86-64-v2".into()];
    t
}

fn fs() -> Fake {
    Fake::default()
        .with("/bin/app", ElfInfo::default())
        .lib("/lib64/ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2")
}

fn entry(soname: &str, path: &str, hwcaps: Option<(&str, u64)>) -> CacheEntry {
    CacheEntry {
        soname: soname.into(),
        path: path.into(),
        arch: "x86-64".into(),
        flags: 0x303,
        hwcap: hwcaps.map_or(0, |(_, i)| HWCAP_EXTENSION | i),
        hwcaps: hwcaps.map(|(n, _)| n.to_string()),
    }
}

fn env(llp: Option<&str>, preload: Option<&str>, secure: bool) -> LoaderEnvironment {
    LoaderEnvironment {
        ld_library_path: llp.map(String::from),
        ld_preload: preload.map(String::from),
        preload_file: None,
        secure,
        cwd: "/work".into(),
    }
}

fn open(
    fs: &Fake,
    env: &LoaderEnvironment,
    cache: &[CacheEntry],
    name: &str,
) -> Result<Loaded, LoadError> {
    let t = target();
    let mut p = Process::start(fs, &t, env, cache, Rules::all(), "/bin/app")?;
    let i = p.dlopen(0, name)?;
    Ok(p.objects[i].clone())
}

#[test]
fn secure_execution_ignores_ld_library_path() {
    let fs = fs()
        .lib("/opt/a/liba.so.1", "liba.so.1")
        .lib("/usr/lib/liba.so.1", "liba.so.1");
    let plain = open(&fs, &env(Some("/opt/a"), None, false), &[], "liba.so.1").unwrap();
    assert_eq!(
        (plain.real.as_str(), plain.rule),
        ("/opt/a/liba.so.1", LoadRule::LdLibraryPath)
    );
    let secure = open(&fs, &env(Some("/opt/a"), None, true), &[], "liba.so.1").unwrap();
    assert_eq!(
        (secure.real.as_str(), secure.rule),
        ("/usr/lib/liba.so.1", LoadRule::Default)
    );
}

#[test]
fn secure_execution_drops_preload_paths_and_late_origin() {
    let fs = fs().lib("/opt/p/libp.so", "libp.so");
    let t = target();
    let e = env(None, Some("/opt/p/libp.so"), true);
    let p = Process::start(&fs, &t, &e, &[], Rules::all(), "/bin/app").unwrap();
    assert_eq!(
        p.objects.len(),
        2,
        "a preload path is dropped in secure execution"
    );
    let e = env(None, Some("/opt/p/libp.so"), false);
    let p = Process::start(&fs, &t, &e, &[], Rules::all(), "/bin/app").unwrap();
    assert_eq!(p.objects[2].rule, LoadRule::Preload);
    // $ORIGIN not first is dropped in secure execution, kept otherwise.
    let app = ElfInfo {
        rpath_raw: Some("/x$ORIGIN/../lib".into()),
        ..Default::default()
    };
    let fs = fs
        .with("/bin/app", app)
        .lib("/x/bin/../lib/libq.so", "libq.so");
    assert!(open(&fs, &env(None, None, false), &[], "libq.so").is_ok());
    assert!(matches!(
        open(&fs, &env(None, None, true), &[], "libq.so"),
        Err(LoadError::NotFound { .. })
    ));
}

#[test]
fn preload_file_is_split_at_blanks_and_colons_with_comments() {
    let fs = fs()
        .lib("/usr/lib/liba.so", "liba.so")
        .lib("/usr/lib/libb.so", "libb.so");
    let t = target();
    let mut e = env(None, None, false);
    e.preload_file = Some("# a comment libc.so\nliba.so\t:libb.so # x\n".into());
    let p = Process::start(&fs, &t, &e, &[], Rules::all(), "/bin/app").unwrap();
    let names: Vec<&str> = p.objects.iter().skip(2).map(|o| o.real.as_str()).collect();
    assert_eq!(names, ["/usr/lib/liba.so", "/usr/lib/libb.so"]);
}

#[test]
fn cache_prefers_the_best_supported_hwcaps_entry() {
    let fs = fs()
        .lib("/c/v2/libh.so.1", "libh.so.1")
        .lib("/c/v3/libh.so.1", "libh.so.1")
        .lib("/c/v4/libh.so.1", "libh.so.1")
        .lib("/c/libh.so.1", "libh.so.1");
    let cache = [
        entry("libh.so.1", "/c/v4/libh.so.1", Some(("x86-64-v4", 0))),
        entry("libh.so.1", "/c/v2/libh.so.1", Some(("x86-64-v2", 2))),
        entry("libh.so.1", "/c/v3/libh.so.1", Some(("x86-64-v3", 1))),
        entry("libh.so.1", "/c/libh.so.1", None),
    ];
    let got = open(&fs, &env(None, None, false), &cache, "libh.so.1").unwrap();
    assert_eq!(
        (got.real.as_str(), got.rule),
        ("/c/v3/libh.so.1", LoadRule::Cache)
    );
    let mut wrong = entry("libh.so.1", "/c/libh.so.1", None);
    wrong.flags = 0x0003;
    let got = open(&fs, &env(None, None, false), &[wrong], "libh.so.1");
    assert!(got.is_err(), "an entry of another class is not used");
}

#[test]
fn nodefaultlib_skips_system_cache_entries_only() {
    let app = ElfInfo {
        flags_1: crate::elf::DF_1_NODEFLIB,
        ..Default::default()
    };
    let fs = fs()
        .with("/bin/app", app)
        .lib("/usr/lib/x86_64-linux-gnu/libs.so.1", "libs.so.1")
        .lib("/opt/c/libo.so.1", "libo.so.1");
    let cache = [
        entry("libs.so.1", "/usr/lib/x86_64-linux-gnu/libs.so.1", None),
        entry("libo.so.1", "/opt/c/libo.so.1", None),
    ];
    let e = env(None, None, false);
    assert!(open(&fs, &e, &cache, "libs.so.1").is_err());
    assert_eq!(
        open(&fs, &e, &cache, "libo.so.1").unwrap().rule,
        LoadRule::Cache
    );
}

#[test]
fn tokens_expand_and_empty_elements_are_the_working_directory() {
    let fs = fs()
        .lib("/work/libw.so", "libw.so")
        .lib("/opt/lib/x86_64-linux-gnu/x86_64/libt.so", "libt.so");
    let e = env(Some("/nowhere::/opt/$LIB/$PLATFORM"), None, false);
    let w = open(&fs, &e, &[], "libw.so").unwrap();
    assert_eq!(
        (w.name.as_str(), w.rule),
        ("libw.so", LoadRule::LdLibraryPath)
    );
    let t = open(&fs, &e, &[], "libt.so").unwrap();
    assert_eq!(t.real, "/opt/lib/x86_64-linux-gnu/x86_64/libt.so");
}
