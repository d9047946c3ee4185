//! A minimal RFC 4180 CSV reader for the embedded data tables
//! (`jetson/data/*.csv`): quoted fields, doubled quotes, CRLF. Rows are maps
//! from header name to value.

use std::collections::BTreeMap;

/// Parse CSV text into records keyed by the header row. Malformed input never
/// panics: an unterminated quote ends at end of input.
pub fn parse(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => in_quotes = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                any = false;
            }
            _ => field.push(c),
        }
    }
    if any {
        row.push(field);
        rows.push(row);
    }
    let mut it = rows.into_iter();
    let Some(header) = it.next() else {
        return Vec::new();
    };
    it.filter(|r| r.iter().any(|f| !f.trim().is_empty()))
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.into_iter().chain(std::iter::repeat(String::new())))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        let rows = super::parse("a,b\n1,\"x, \"\"y\"\"\"\r\n\n2\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["b"], "x, \"y\"");
        assert_eq!(rows[1]["b"], "");
        assert!(super::parse("").is_empty());
        assert_eq!(super::parse("a\n\"unterminated").len(), 1);
    }
}
