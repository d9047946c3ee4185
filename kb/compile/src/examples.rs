//! An entry's example texts (`examples/<id>/*`): read, their leading `# source: <URL>` lines
//! checked and stripped (kb/FORMAT.md).

use std::path::{Path, PathBuf};

use crate::read;
use crate::Issues;

/// The examples in `dir` (file name, text without its `# source:` lines), sorted by name;
/// empty when `dir` does not exist. Reports unreadable files and malformed `# source:` lines.
pub(crate) fn read(dir: &Path, stem: &str, issues: &mut Issues) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let rel = format!("examples/{stem}/{name}");
        let text = match read::bytes(&p, read::ENTRY_CAP) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                issues.push(&rel, Some(stem), e, true);
                continue;
            }
        };
        for bad in bad_source_lines(&text) {
            issues.push(
                &rel,
                Some(stem),
                format!("\"# source: {bad}\" is not one http(s) URL"),
                false,
            );
        }
        out.push((name, strip_source_lines(&text).to_string()));
    }
    out
}

/// An example without its leading `# source: <URL>` lines (kb/FORMAT.md): the URL says
/// where the example came from and is not part of the error text that search sees.
pub(crate) fn strip_source_lines(text: &str) -> &str {
    let mut rest = text;
    while let Some(line) = rest.lines().next() {
        if !line.starts_with("# source:") {
            break;
        }
        rest = rest[line.len()..].trim_start_matches(['\r', '\n']);
    }
    rest
}

/// Leading `# source:` lines of an example whose value is not an http(s) URL.
fn bad_source_lines(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| l.starts_with("# source:"))
        .filter_map(|l| {
            let v = l["# source:".len()..].trim();
            (!(v.starts_with("https://") || v.starts_with("http://")) || v.contains(' '))
                .then(|| v.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_are_stripped_and_checked() {
        let t = "# source: https://example.org/a\n# source: see the forum\n\nerror: x\n";
        assert_eq!(strip_source_lines(t), "error: x\n");
        assert_eq!(bad_source_lines(t), vec!["see the forum".to_string()]);
        assert_eq!(strip_source_lines("error: y"), "error: y");
    }
}
