//! `categories.tsv` and the code tables (`tables/cuda_errors.csv`, `tables/xid.csv`):
//! read, checked row by row (a bad row is a fatal issue and is left out), and the entries'
//! `codes` resolved against them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::{read, Category, Issues, LoadedEntry};

/// A header and rows, or a one-line reason (`line N: ...`).
type Csv = (Vec<String>, Vec<Vec<String>>);

/// A parsed CSV (header + rows) with a tiny RFC 4180 reader.
fn parse_csv(text: &str) -> Result<Csv, String> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else {
            match c {
                '"' => quoted = true,
                ',' => row.push(std::mem::take(&mut field)),
                '\r' => {}
                '\n' => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                _ => field.push(c),
            }
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("empty CSV".into());
    }
    let header = rows.remove(0);
    for (i, r) in rows.iter().enumerate() {
        if r.len() != header.len() {
            return Err(format!(
                "line {}: {} fields, the header has {}",
                i + 2,
                r.len(),
                header.len()
            ));
        }
    }
    Ok((header, rows))
}

/// The index of column `name`, or why not.
fn col(header: &[String], name: &str) -> Result<usize, String> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| format!("no `{name}` column"))
}

/// Maps a `library` column value to the code-key prefix and the generated-id prefix.
fn library_prefix(lib: &str) -> Option<(&'static str, &'static str)> {
    Some(if lib.starts_with("CUresult") {
        ("cuda", "cuda")
    } else if lib.starts_with("cudaError_t") {
        ("cudart", "cudart")
    } else if lib.starts_with("nvmlReturn_t") {
        ("nvml", "nvml")
    } else if lib.starts_with("cublasStatus_t") {
        ("cublas", "cublas")
    } else if lib.starts_with("cudnnStatus_t (cuDNN <=8") {
        ("cudnn", "cudnn8")
    } else if lib.starts_with("cudnnStatus_t") {
        ("cudnn", "cudnn")
    } else if lib.starts_with("ncclResult_t") {
        ("nccl", "nccl")
    } else {
        return None;
    })
}

/// One row of the code tables, as the database stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    /// `cuda-209`, `xid-79`.
    pub id: String,
    pub library: String,
    /// `cuda`, `cudart`, `nvml`, `cublas`, `cudnn`, `nccl`, `xid`.
    pub prefix: String,
    /// `prefix:number`.
    pub key: String,
    pub number: i64,
    pub name: String,
    pub message: String,
    pub description: String,
    pub source: String,
    pub verified: String,
}

/// The names of a `same_as` field: comma-separated snake_case categories, none empty.
fn same_as_list(field: &str) -> Result<Vec<String>, String> {
    let field = field.trim();
    if field.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for name in field.split(',').map(str::trim) {
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(format!(
                "\"{name}\" is not a category name (snake_case, comma-separated)"
            ));
        }
        out.push(name.to_string());
    }
    Ok(out)
}

/// `categories.tsv`: every well-formed row; a malformed row or a second row for one
/// category is a fatal issue (`categories.tsv:LINE`).
pub(crate) fn read_categories(dir: &Path, issues: &mut Issues) -> Vec<Category> {
    let text = match read::text(&dir.join("categories.tsv"), read::TABLE_CAP) {
        Ok(t) => t,
        Err(e) => {
            issues.push("categories.tsv", None, e, true);
            return Vec::new();
        }
    };
    let mut out: Vec<Category> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("categories.tsv:{}", i + 1);
        let f: Vec<&str> = line.split('\t').collect();
        // 4 fields, or 5 with `same_as` (comma-separated eval categories naming the same
        // cause; may be empty).
        if !(4..=5).contains(&f.len()) || f[..4].iter().any(|x| x.trim().is_empty()) {
            issues.push(
                &at,
                None,
                "expected 4 non-empty tab-separated fields (category, layer, meaning, source) and an optional 5th (same_as)".into(),
                true,
            );
            continue;
        }
        let same_as = match same_as_list(f.get(4).copied().unwrap_or("")) {
            Ok(s) => s,
            Err(m) => {
                issues.push(&at, None, format!("same_as: {m}"), true);
                continue;
            }
        };
        if !seen.insert(f[0].to_string()) {
            issues.push(
                &at,
                None,
                format!("category \"{}\" is listed twice", f[0]),
                true,
            );
            continue;
        }
        out.push(Category {
            name: f[0].into(),
            layer: f[1].into(),
            meaning: f[2].into(),
            source: f[3].into(),
            same_as: same_as.join(","),
        });
    }
    out
}

/// A table's header and rows, or a fatal issue and `None`.
fn table(dir: &Path, rel: &str, issues: &mut Issues) -> Option<Csv> {
    let parsed = read::text(&dir.join(rel), read::TABLE_CAP).and_then(|t| parse_csv(&t));
    match parsed {
        Ok(c) => Some(c),
        Err(e) => {
            issues.push(rel, None, e, true);
            None
        }
    }
}

/// The column indices of `names`, or a fatal issue and `None`.
fn columns<const N: usize>(
    header: &[String],
    names: [&str; N],
    rel: &str,
    issues: &mut Issues,
) -> Option<[usize; N]> {
    let mut out = [0; N];
    for (o, n) in out.iter_mut().zip(names) {
        match col(header, n) {
            Ok(c) => *o = c,
            Err(e) => {
                issues.push(rel, None, e, true);
                return None;
            }
        }
    }
    Some(out)
}

/// Every row of `tables/cuda_errors.csv` and `tables/xid.csv`; a row with an unknown
/// library, a code that is not a number or an empty source is a fatal issue
/// (`tables/NAME.csv:LINE`).
pub(crate) fn read_codes(dir: &Path, issues: &mut Issues) -> Vec<CodeRow> {
    let mut codes = Vec::new();
    let rel = "tables/cuda_errors.csv";
    if let Some((h, rows)) = table(dir, rel, issues) {
        let names = [
            "library",
            "code",
            "enum_name",
            "message_string",
            "description",
            "source",
            "verified",
        ];
        if let Some([c_lib, c_code, c_name, c_msg, c_desc, c_src, c_ver]) =
            columns(&h, names, rel, issues)
        {
            for (i, r) in rows.iter().enumerate() {
                let at = format!("{rel}:{}", i + 2);
                let Some((prefix, idp)) = library_prefix(&r[c_lib]) else {
                    issues.push(&at, None, format!("unknown library \"{}\"", r[c_lib]), true);
                    continue;
                };
                let Ok(number) = r[c_code].trim().parse::<i64>() else {
                    let m = format!("code \"{}\" is not a number", r[c_code]);
                    issues.push(&at, None, m, true);
                    continue;
                };
                if r[c_src].trim().is_empty() {
                    issues.push(&at, None, "empty source".into(), true);
                    continue;
                }
                codes.push(CodeRow {
                    id: format!("{idp}-{number}"),
                    library: r[c_lib].clone(),
                    prefix: prefix.into(),
                    key: format!("{prefix}:{number}"),
                    number,
                    name: r[c_name].trim().into(),
                    message: r[c_msg].trim().into(),
                    description: r[c_desc].trim().into(),
                    source: r[c_src].trim().into(),
                    verified: r[c_ver].trim().into(),
                });
            }
        }
    }
    let rel = "tables/xid.csv";
    if let Some((h, rows)) = table(dir, rel, issues) {
        let names = [
            "xid",
            "mnemonic",
            "description",
            "legacy_description_pre_ampere_doc",
            "immediate_action",
            "investigatory_action",
            "trigger_conditions_summary",
            "source",
            "verified",
        ];
        if let Some([x_num, x_mn, x_desc, x_leg, x_imm, x_inv, x_trig, x_src, x_ver]) =
            columns(&h, names, rel, issues)
        {
            for (i, r) in rows.iter().enumerate() {
                let at = format!("{rel}:{}", i + 2);
                let Ok(number) = r[x_num].trim().parse::<i64>() else {
                    let m = format!("xid \"{}\" is not a number", r[x_num]);
                    issues.push(&at, None, m, true);
                    continue;
                };
                if r[x_src].trim().is_empty() {
                    issues.push(&at, None, "empty source".into(), true);
                    continue;
                }
                let mut desc = r[x_desc].trim().to_string();
                if !r[x_leg].trim().is_empty() && r[x_leg].trim() != desc {
                    let _ = write!(desc, " (older documentation: {})", r[x_leg].trim());
                }
                let mut more = Vec::new();
                for (label, c) in [
                    ("Immediate action", x_imm),
                    ("Investigation", x_inv),
                    ("Triggers", x_trig),
                ] {
                    if !r[c].trim().is_empty() {
                        more.push(format!("{label}: {}", r[c].trim()));
                    }
                }
                codes.push(CodeRow {
                    id: format!("xid-{number}"),
                    library: "Xid (NVIDIA driver, kernel log)".into(),
                    prefix: "xid".into(),
                    key: format!("xid:{number}"),
                    number,
                    name: r[x_mn].trim().into(),
                    message: desc,
                    description: more.join(". "),
                    source: r[x_src].trim().into(),
                    verified: r[x_ver].trim().into(),
                });
            }
        }
    }
    codes
}

/// Code key -> entry ids and entry id -> code keys, from each entry's `codes` (a key such
/// as `cuda:209`, or an enum name); a code the tables lack is an issue.
pub(crate) fn resolve_codes(
    codes: &[CodeRow],
    entries: &[LoadedEntry],
    issues: &mut Issues,
) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<String>>) {
    let mut code_keys: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in codes {
        code_keys.insert(c.key.clone());
        names
            .entry(c.name.to_lowercase())
            .or_default()
            .push(c.key.clone());
    }
    let tables = issues.file("tables");
    let mut links: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut entry_keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for LoadedEntry { entry: e, .. } in entries {
        let rel = format!("entries/{}.toml", e.id);
        for c in &e.codes {
            let keys: Vec<String> = if c.contains(':') {
                let k = c.trim().to_lowercase();
                if code_keys.contains(&k) {
                    vec![k]
                } else {
                    let m = format!("code \"{c}\" is not in {tables}");
                    issues.push(&rel, Some(&e.id), m, false);
                    vec![]
                }
            } else if let Some(ks) = names.get(&c.trim().to_lowercase()) {
                ks.clone()
            } else {
                let m = format!("code name \"{c}\" is not in {tables}");
                issues.push(&rel, Some(&e.id), m, false);
                vec![]
            };
            for k in keys {
                let v = links.entry(k.clone()).or_default();
                if !v.contains(&e.id) {
                    v.push(e.id.clone());
                }
                let ek = entry_keys.entry(e.id.clone()).or_default();
                if !ek.contains(&k) {
                    ek.push(k);
                }
            }
        }
    }
    (links, entry_keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_quotes_and_rejects_ragged_rows() {
        let (h, rows) = parse_csv("a,b\n\"x,\"\"y\"\"\",2\r\n").unwrap();
        assert_eq!(h, vec!["a", "b"]);
        assert_eq!(rows, vec![vec!["x,\"y\"".to_string(), "2".into()]]);
        assert_eq!(
            parse_csv("a,b\n1\n").unwrap_err(),
            "line 2: 1 fields, the header has 2"
        );
        assert!(parse_csv("").is_err());
    }

    #[test]
    fn same_as_names_are_snake_case() {
        assert_eq!(same_as_list(" a_b, c ").unwrap(), vec!["a_b", "c"]);
        assert!(same_as_list("a,,b").is_err());
        assert!(same_as_list("Bad-Name").is_err());
    }
}
