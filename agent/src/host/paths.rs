//! Path handling under a root: joining and resolving symlinks so that an
//! absolute link target inside a copied root filesystem stays inside it.
#![allow(clippy::disallowed_methods)] // part of the host seam

use super::HostError;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Machine paths known to exist and not to be symlinks.
pub(super) type Verified = HashSet<String, std::hash::BuildHasherDefault<super::NameHasher>>;

/// The real location of machine path `path` under `root`.
pub(super) fn under_root(root: &Path, path: &str) -> PathBuf {
    let rel = path.trim_start_matches('/');
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// Resolves every symlink in `path` as the machine would see it, keeping
/// absolute targets inside `root`. `Ok(None)` when some component is absent.
pub(super) fn resolve(root: &Path, path: &str) -> Result<Option<String>, HostError> {
    resolve_remembering(root, path, &Mutex::new(None))
}

/// [`resolve`], skipping the `lstat` of a prefix found before to exist and not
/// to be a symlink, and remembering those it finds, while `verified` holds a set.
pub(super) fn resolve_remembering(
    root: &Path,
    path: &str,
    verified: &Mutex<Option<Verified>>,
) -> Result<Option<String>, HostError> {
    let known = |p: &str| {
        verified
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|v| v.contains(p))
    };
    let remember = |p: String| {
        if let Some(v) = verified.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            v.insert(p);
        }
    };
    // The resolved prefix, built in place: `here` is `/a/b/c`, `ends` where each component
    // ends in it (one path string per component instead of a join of all of them).
    let mut here = String::with_capacity(path.len() + 16);
    let mut ends: Vec<usize> = Vec::new();
    let mut todo: Vec<String> = split(path).into_iter().rev().collect();
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        match part.as_str() {
            "." => continue,
            ".." => {
                ends.pop();
                here.truncate(ends.last().copied().unwrap_or(0));
                continue;
            }
            _ => {}
        }
        here.push('/');
        here.push_str(&part);
        ends.push(here.len());
        if known(&here) {
            continue;
        }
        let full = under_root(root, &here);
        match std::fs::symlink_metadata(&full) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(None)
            }
            Err(e) => {
                return Err(HostError::Io {
                    path: here,
                    message: e.to_string(),
                })
            }
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > 40 {
                    return Err(HostError::Io {
                        path: path.to_string(),
                        message: "too many levels of symbolic links".into(),
                    });
                }
                let target = std::fs::read_link(&full).map_err(|e| HostError::Io {
                    path: here.clone(),
                    message: e.to_string(),
                })?;
                let target = target.to_string_lossy().into_owned();
                ends.pop();
                if target.starts_with('/') {
                    ends.clear();
                }
                here.truncate(ends.last().copied().unwrap_or(0));
                for p in split(&target).into_iter().rev() {
                    todo.push(p);
                }
            }
            Ok(_) => remember(here.clone()),
        }
    }
    Ok(Some(if here.is_empty() {
        "/".to_string()
    } else {
        here
    }))
}

fn split(p: &str) -> Vec<String> {
    Path::new(p)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_links_stay_inside_the_root() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("usr/lib")).unwrap();
        std::fs::write(root.join("usr/lib/libcuda.so.580.1"), b"x").unwrap();
        std::os::unix::fs::symlink(
            "/usr/lib/libcuda.so.580.1",
            root.join("usr/lib/libcuda.so.1"),
        )
        .unwrap();
        std::os::unix::fs::symlink("usr/lib", root.join("lib64")).unwrap();
        assert_eq!(
            resolve(root, "/lib64/libcuda.so.1").unwrap().as_deref(),
            Some("/usr/lib/libcuda.so.580.1")
        );
        assert_eq!(resolve(root, "/lib64/missing").unwrap(), None);
    }

    #[test]
    fn link_loops_are_an_error_not_a_hang() {
        let t = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/b", t.path().join("a")).unwrap();
        std::os::unix::fs::symlink("/a", t.path().join("b")).unwrap();
        assert!(resolve(t.path(), "/a").is_err());
    }

    /// Within one observation the resolver remembers plain prefixes: it gives
    /// the answers the plain resolver gives, for paths through links (relative,
    /// absolute, chained), `..` and absent files, in any order, and it never
    /// remembers a symlink (a link's target is always read).
    #[test]
    fn remembered_prefixes_give_the_same_answers() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("usr/local/cuda-13.0/lib64")).unwrap();
        std::fs::create_dir_all(root.join("opt/a/b")).unwrap();
        std::fs::write(
            root.join("usr/local/cuda-13.0/lib64/libcublas.so.13.1.0"),
            b"x",
        )
        .unwrap();
        std::os::unix::fs::symlink(
            "libcublas.so.13.1.0",
            root.join("usr/local/cuda-13.0/lib64/libcublas.so.13"),
        )
        .unwrap();
        std::os::unix::fs::symlink("cuda-13.0", root.join("usr/local/cuda")).unwrap();
        std::os::unix::fs::symlink("/usr/local/cuda", root.join("usr/local/cuda-13")).unwrap();
        std::os::unix::fs::symlink("../../usr/local/cuda/lib64", root.join("opt/a/lib")).unwrap();
        let paths = [
            "/usr/local/cuda/lib64/libcublas.so.13",
            "/usr/local/cuda-13/lib64/libcublas.so.13",
            "/usr/local/cuda-13.0/lib64/libcublas.so.13",
            "/opt/a/lib/libcublas.so.13",
            "/opt/a/b/../lib/libcublas.so.13.1.0",
            "/usr/local/cuda/lib64/missing.so.1",
            "/usr/local/cuda-13.0/lib64/libcublas.so.13",
        ];
        let memo = Mutex::new(Some(Verified::default()));
        for p in paths {
            assert_eq!(
                resolve_remembering(root, p, &memo).unwrap(),
                resolve(root, p).unwrap(),
                "{p}"
            );
        }
        let known = memo.lock().unwrap().clone().unwrap();
        assert!(known.contains("/usr/local/cuda-13.0/lib64"), "{known:?}");
        for link in [
            "/usr/local/cuda",
            "/usr/local/cuda-13",
            "/opt/a/lib",
            "/usr/local/cuda-13.0/lib64/libcublas.so.13",
        ] {
            assert!(!known.contains(link), "{link} is a symlink: {known:?}");
        }
    }
}
