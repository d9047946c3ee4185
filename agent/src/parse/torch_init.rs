//! What an installed PyTorch's own `torch/__init__.py` says it loads by itself:
//! the `cuda_libs` table of `_preload_cuda_deps` (or, before PyTorch 2.6, of
//! `_load_global_deps`), whether the table is also preloaded after
//! `libtorch_global_deps.so` loaded fine (PyTorch 2.6+, the "slim-wheel" workaround
//! of pytorch/pytorch#138460 and #145580), and whether `_get_cuda_dep_paths` also
//! looks in CUDA 13's merged `nvidia/cu<major>/lib` folder. A pure parser on the
//! file's text; the loader's PyTorch model (`loader/torch.rs`) applies it.

/// The preload logic one `torch/__init__.py` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchPreload {
    /// `(folder under nvidia/, glob)` in the table's order, e.g.
    /// `("cublas", "libcublasLt.so.*[0-9]")`.
    pub libs: Vec<(String, String)>,
    /// The table is also preloaded when `libtorch_global_deps.so` loaded and
    /// `libcudart.so` is mapped, not only when it failed to load.
    pub after_success: bool,
    /// `_get_cuda_dep_paths` also searches `nvidia/cu<major of torch.version.cuda>/lib`.
    pub merged_cuda_folder: bool,
}

/// The body of the top-level `def name` (up to the next top-level statement).
fn function_body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let head = format!("\ndef {name}(");
    let start = src.find(&head)? + 1;
    let rest = &src[start..];
    let end = rest[1..]
        .match_indices('\n')
        .map(|(i, _)| i + 2)
        .find(|&i| {
            rest[i..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && c != '#' && c != ')')
        })
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Every `("folder", "lib….so.*[0-9]")` tuple or `"folder": "lib…"` dict entry, in order.
fn table(body: &str) -> Vec<(String, String)> {
    body.lines().filter_map(entry).collect()
}

/// One table line: optional `(`, a quoted folder name of `[A-Za-z0-9_]`, `,` or `:`, then a
/// quoted `lib….so…` (whitespace allowed between the parts). Read by hand: compiling the
/// equivalent regex cost more than the whole parse (`what import torch loads`: 5.6 →
/// 5.3–5.4 ms CPU, medians of 21, a cu132 torch on the build VM).
fn entry(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    let (folder, rest) = quoted(rest)?;
    if folder.is_empty()
        || !folder
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    let rest = rest.trim_start();
    let rest = rest.strip_prefix([',', ':'])?.trim_start();
    let (lib, _) = quoted(rest)?;
    // `lib`, at least one character, then `.so` somewhere after it
    let so_after_lib = lib.len() > 4 && lib.as_bytes()[4..].windows(3).any(|w| w == b".so");
    (lib.starts_with("lib") && so_after_lib).then(|| (folder.to_string(), lib.to_string()))
}

/// The text of a `"…"` at the start of `s` (no escapes) and what follows it.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let inner = s.strip_prefix('"')?;
    let end = inner.find('"')?;
    Some((&inner[..end], &inner[end + 1..]))
}

/// Parses `torch/__init__.py`; `None` when it has no CUDA preload table (a CPU or a
/// non-Linux build, or a layout this parser does not know).
pub fn parse(src: &str) -> Option<TorchPreload> {
    let deps = function_body(src, "_preload_cuda_deps");
    let global = function_body(src, "_load_global_deps")?;
    let mut libs = deps.map(table).unwrap_or_default();
    if libs.is_empty() {
        libs = table(global);
    }
    if libs.is_empty() {
        return None;
    }
    // The success branch is the text between `try:` and `except OSError`.
    let success = global
        .split_once("try:")
        .map(|(_, t)| t.split("except OSError").next().unwrap_or(t))
        .unwrap_or("");
    let after_success = success.contains("_preload_cuda_deps()");
    let merged_cuda_folder =
        function_body(src, "_get_cuda_dep_paths").is_some_and(|b| b.contains("f\"cu{"));
    Some(TorchPreload {
        libs,
        after_success,
        merged_cuda_folder,
    })
}

/// Whether a file name matches a `_preload_cuda_deps` glob of the form
/// `PREFIX*[0-9]` (the only form the table uses): it starts with `PREFIX` and ends in
/// a digit.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix("*[0-9]") {
        Some(prefix) => {
            name.starts_with(prefix)
                && name.len() > prefix.len()
                && name.ends_with(|c: char| c.is_ascii_digit())
        }
        None => name == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Verbatim from torch 2.11.0+cu130's `torch/__init__.py` on the H200
    /// (tests/live/results/who_loads/global_deps.py.txt), `_get_cuda_dep_paths` as in
    /// pytorch/pytorch main (2025, CUDA 13 merged folder).
    const TORCH_2_11: &str = include_str!("../../tests/data/torch-2.11-init-excerpt.py");

    #[test]
    fn torch_2_11_preloads_its_table_after_a_successful_global_deps_load() {
        let p = parse(TORCH_2_11).expect("a table");
        assert!(p.after_success);
        assert!(p.merged_cuda_folder);
        assert_eq!(p.libs.len(), 16, "{:?}", p.libs);
        assert_eq!(
            p.libs[0],
            ("cublas".to_string(), "libcublasLt.so.*[0-9]".to_string())
        );
        assert_eq!(
            p.libs.last().unwrap(),
            &("cufile".to_string(), "libcufile.so.*[0-9]".to_string())
        );
        assert!(
            p.libs.iter().all(|(_, l)| !l.contains("ToolsExt")),
            "nvtx is optional, not in the table"
        );
    }

    /// PyTorch 2.1's shape: a dict inside `_load_global_deps`, preloaded only when
    /// loading `libtorch_global_deps.so` failed.
    #[test]
    fn torch_2_1_preloads_only_on_failure() {
        let src = r#"
def _preload_cuda_deps(lib_folder, lib_name):
    """Preloads cuda deps if they could not be found otherwise."""
    # Should only be called on Linux if default path resolution have failed
    assert platform.system() == 'Linux', 'Should only be called on Linux'
    import glob
    lib_path = None
    for path in sys.path:
        nvidia_path = os.path.join(path, 'nvidia')
        if not os.path.exists(nvidia_path):
            continue
        candidate_lib_paths = glob.glob(os.path.join(nvidia_path, lib_folder, 'lib', lib_name))
        if candidate_lib_paths and not lib_path:
            lib_path = candidate_lib_paths[0]
        if lib_path:
            break
    if not lib_path:
        raise ValueError(f"{lib_name} not found in the system path {sys.path}")
    ctypes.CDLL(lib_path)


# See Note [Global dependencies]
def _load_global_deps() -> None:
    if _running_with_deploy() or platform.system() == 'Windows':
        return

    lib_name = 'libtorch_global_deps' + ('.dylib' if platform.system() == 'Darwin' else '.so')
    here = os.path.abspath(__file__)
    lib_path = os.path.join(os.path.dirname(here), 'lib', lib_name)

    try:
        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        # Can only happen for wheel with cuda libs as PYPI deps
        # As PyTorch is not purelib, but nvidia-*-cu12 is
        cuda_libs: Dict[str, str] = {
            'cublas': 'libcublas.so.*[0-9]',
            'cudnn': 'libcudnn.so.*[0-9]',
        }
        is_cuda_lib_err = [lib for lib in cuda_libs.values() if(lib.split('.')[0] in err.args[0])]
        if not is_cuda_lib_err:
            raise err
        for lib_folder, lib_name in cuda_libs.items():
            _preload_cuda_deps(lib_folder, lib_name)
        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)
"#
        .replace('\'', "\"");
        let p = parse(&src).expect("a table");
        assert!(!p.after_success);
        assert!(!p.merged_cuda_folder);
        assert_eq!(p.libs.len(), 2);
        assert_eq!(p.libs[1].0, "cudnn");
    }

    #[test]
    fn no_table_is_none() {
        assert_eq!(
            parse("def _load_global_deps() -> None:\n    return\n"),
            None
        );
        assert_eq!(parse(""), None);
    }

    /// The hand reader takes exactly the lines the table's grammar (as a regex) takes.
    #[test]
    fn entry_reads_what_the_grammar_matches() {
        let grammar =
            regex::Regex::new(r#"^\s*\(?\s*"([A-Za-z0-9_]+)"\s*[,:]\s*"(lib[^"]+\.so[^"]*)""#)
                .unwrap();
        let heads = ["", "    ", "\t(", "    (  ", "(", "  x(", "#  "];
        let folders = [
            "\"cublas\"",
            "\"cuda_runtime\"",
            "\"\"",
            "\"cu-blas\"",
            "'cublas'",
            "\"cu13\"",
        ];
        let seps = [",", ": ", " , ", ";", ""];
        let libs = [
            "\"libcublas.so.*[0-9]\"",
            "\"libcudart.so\"",
            "\"lib.so\"",
            "\"libx.dylib\"",
            "\"cublas.so\"",
            "\"libnvrtc.so.*[0-9]\"),",
            "libcudnn.so",
            "\"libcusparseLt.so.*[0-9]",
            "\"lib.so.so\"",
            "\"libé.so\"",
        ];
        let mut n = 0;
        for h in heads {
            for f in folders {
                for sep in seps {
                    for l in libs {
                        let line = format!("{h}{f}{sep}{l}");
                        let want = grammar
                            .captures(&line)
                            .map(|c| (c[1].to_string(), c[2].to_string()));
                        assert_eq!(entry(&line), want, "{line}");
                        n += usize::from(want.is_some());
                    }
                }
            }
        }
        assert!(n > 20, "{n} lines matched: the variants exercise the match");
    }

    #[test]
    fn globs() {
        assert!(glob_matches("libcudnn.so.*[0-9]", "libcudnn.so.9"));
        assert!(glob_matches("libcudnn.so.*[0-9]", "libcudnn.so.9.19.0"));
        assert!(!glob_matches("libcudnn.so.*[0-9]", "libcudnn.so"));
        assert!(!glob_matches("libcudnn.so.*[0-9]", "libcudnn_ops.so.9"));
        assert!(!glob_matches("libnvrtc.so.*[0-9]", "libnvrtc.so.13.alt"));
    }
}
