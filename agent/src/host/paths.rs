//! Path handling under a root: joining and resolving symlinks so that an
//! absolute link target inside a copied root filesystem stays inside it.
#![allow(clippy::disallowed_methods)] // part of the host seam

use super::HostError;
use std::path::{Component, Path, PathBuf};

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
    let mut done: Vec<String> = Vec::new();
    let mut todo: Vec<String> = split(path).into_iter().rev().collect();
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        match part.as_str() {
            "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        done.push(part);
        let here = format!("/{}", done.join("/"));
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
                done.pop();
                if target.starts_with('/') {
                    done.clear();
                }
                for p in split(&target).into_iter().rev() {
                    todo.push(p);
                }
            }
            Ok(_) => {}
        }
    }
    Ok(Some(format!("/{}", done.join("/"))))
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
}
