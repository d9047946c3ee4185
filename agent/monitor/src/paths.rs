//! Where the history lives when `--db` is not given:
//! `$STATE_DIRECTORY/agent.db` when systemd sets it (`StateDirectory=gpukb`),
//! else `/var/lib/gpukb/agent.db` as root, else
//! `$XDG_STATE_HOME/gpukb/agent.db` (`~/.local/state/gpukb/agent.db`).

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
}
