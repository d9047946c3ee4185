//! Where the history lives when `--db` is not given:
//! `$STATE_DIRECTORY/agent.db` when systemd sets it (`StateDirectory=gpukb`),
//! else `/var/lib/gpukb/agent.db` as root, else
//! `$XDG_STATE_HOME/gpukb/agent.db` (`~/.local/state/gpukb/agent.db`);
//! and where the agent caches ELF summaries of large libraries (so that a
//! stack snapshot does not walk `libtorch_cuda.so`'s gigabyte of GPU code
//! each time): `$CACHE_DIRECTORY` when systemd sets it (`CacheDirectory=gpukb`),
//! else `elf-cache/` next to the history, a directory the agent can always
//! write (under `DynamicUser=`, or a container with a read-only root, the
//! home directory's cache often is not).

use std::path::PathBuf;

/// The default database path. `var` reads an environment variable (the
/// caller decides where from); `is_root` is the effective user being root.
pub fn default_db(var: &dyn Fn(&str) -> Option<String>, is_root: bool) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let Some(dirs) = set("STATE_DIRECTORY") {
        // systemd passes a colon-separated list when several are configured.
        let first = dirs.split(':').next().unwrap_or(&dirs).to_string();
        return Some(PathBuf::from(first).join("agent.db"));
    }
    if is_root {
        return Some(PathBuf::from("/var/lib/gpukb/agent.db"));
    }
    if let Some(x) = set("XDG_STATE_HOME").filter(|x| x.starts_with('/')) {
        return Some(PathBuf::from(x).join("gpukb/agent.db"));
    }
    set("HOME").map(|h| PathBuf::from(h).join(".local/state/gpukb/agent.db"))
}

/// The ELF summary cache directory; `db` is the history's path. `None` when
/// `GPUKB_NO_CACHE` is set (or the history has no directory).
pub fn elf_cache_dir(
    var: &dyn Fn(&str) -> Option<String>,
    db: &std::path::Path,
) -> Option<PathBuf> {
    if var("GPUKB_NO_CACHE").is_some() {
        return None;
    }
    if let Some(dirs) = var("CACHE_DIRECTORY").filter(|v| !v.trim().is_empty()) {
        let first = dirs.split(':').next().unwrap_or(&dirs).to_string();
        return Some(PathBuf::from(first));
    }
    let dir = db.parent().filter(|d| !d.as_os_str().is_empty())?;
    Some(dir.join("elf-cache"))
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn rules_in_order() {
        let p =
            |e: &[(&str, &str)], root| default_db(&env(e), root).map(|p| p.display().to_string());
        assert_eq!(
            p(
                &[("STATE_DIRECTORY", "/var/lib/gpukb:/x"), ("HOME", "/h")],
                true
            )
            .unwrap(),
            "/var/lib/gpukb/agent.db"
        );
        assert_eq!(
            p(&[("STATE_DIRECTORY", "/srv/s")], false).unwrap(),
            "/srv/s/agent.db"
        );
        assert_eq!(
            p(&[("HOME", "/root")], true).unwrap(),
            "/var/lib/gpukb/agent.db"
        );
        assert_eq!(
            p(&[("XDG_STATE_HOME", "/x/state"), ("HOME", "/h")], false).unwrap(),
            "/x/state/gpukb/agent.db"
        );
        assert_eq!(
            p(&[("XDG_STATE_HOME", "relative"), ("HOME", "/h")], false).unwrap(),
            "/h/.local/state/gpukb/agent.db"
        );
        assert_eq!(p(&[], false), None);
    }

    #[test]
    fn elf_cache_prefers_systemd_then_the_history() {
        let db = std::path::Path::new("/var/lib/gpukb/agent.db");
        let c = |e: &[(&str, &str)], db: &std::path::Path| {
            elf_cache_dir(&env(e), db).map(|p| p.display().to_string())
        };
        assert_eq!(
            c(
                &[("CACHE_DIRECTORY", "/var/cache/gpukb:/x"), ("HOME", "/h")],
                db
            )
            .unwrap(),
            "/var/cache/gpukb"
        );
        assert_eq!(
            c(&[("HOME", "/h")], db).unwrap(),
            "/var/lib/gpukb/elf-cache"
        );
        assert_eq!(c(&[], std::path::Path::new("agent.db")), None);
        assert_eq!(
            c(&[("GPUKB_NO_CACHE", "1"), ("CACHE_DIRECTORY", "/c")], db),
            None
        );
    }
}
