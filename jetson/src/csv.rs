//! A minimal RFC 4180 CSV reader for the embedded data tables
//! (`jetson/data/*.csv` and the agent's tables): quoted fields, doubled quotes, CRLF.
//! [`table`] gives the rows under one header ([`TableRow::get`] by column name);
//! [`parse`] gives a map from header name to value per row.

use std::collections::BTreeMap;

/// A parsed table: the header row and its records, without a map per record (the
/// tables are read on every search that uses machine facts).
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// One record of a [`Table`]: its fields by header name.
#[derive(Debug, Clone, Copy)]
pub struct TableRow<'a> {
    header: &'a [String],
    values: &'a [String],
}

impl<'a> TableRow<'a> {
    /// The field under header `k` (empty when the record is shorter than the header);
    /// `None` when no column is named `k`.
    pub fn get(&self, k: &str) -> Option<&'a str> {
        let i = self.header.iter().position(|h| h == k)?;
        Some(self.values.get(i).map_or("", String::as_str))
    }
}

impl Table {
    /// Every record that has a non-blank field, in order.
    pub fn records(&self) -> impl Iterator<Item = TableRow<'_>> {
        self.rows.iter().map(|values| TableRow {
            header: &self.header,
            values,
        })
    }
}

/// Parse CSV text into records keyed by the header row. Malformed input never
/// panics: an unterminated quote ends at end of input.
pub fn parse(text: &str) -> Vec<BTreeMap<String, String>> {
    let t = table(text);
    t.records()
        .map(|r| {
            t.header
                .iter()
                .map(|h| (h.clone(), r.get(h).unwrap_or_default().to_string()))
                .collect()
        })
        .collect()
}

/// Parse CSV text into a [`Table`] (the reading [`parse`] does, without the maps).
pub fn table(text: &str) -> Table {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut any = false;
    // Runs of ordinary text are copied whole; only the delimiters are looked at one by
    // one (the tables are read on every search that uses machine facts).
    let mut rest = text;
    while !rest.is_empty() {
        any = true;
        if in_quotes {
            match rest.find('"') {
                Some(k) => {
                    field.push_str(&rest[..k]);
                    rest = &rest[k + 1..];
                    if let Some(after) = rest.strip_prefix('"') {
                        field.push('"');
                        rest = after;
                    } else {
                        in_quotes = false;
                    }
                }
                None => {
                    field.push_str(rest);
                    rest = "";
                }
            }
            continue;
        }
        let k = rest.find(['"', ',', '\r', '\n']).unwrap_or(rest.len());
        field.push_str(&rest[..k]);
        rest = &rest[k..];
        let Some(c) = rest.chars().next() else {
            break;
        };
        rest = &rest[1..];
        match c {
            '"' => in_quotes = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                any = false;
            }
            _ => {} // '\r'
        }
    }
    if any {
        row.push(field);
        rows.push(row);
    }
    let mut it = rows.into_iter();
    let Some(header) = it.next() else {
        return Table::default();
    };
    Table {
        header,
        rows: it
            .filter(|r| r.iter().any(|f| !f.trim().is_empty()))
            .collect(),
    }
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
        assert_eq!(super::parse("a\n\"unterminated")[0]["a"], "unterminated");
        // a quoted field spans lines; a bare CR is dropped; a short row is padded
        let rows = super::parse("a,b,c\r\n\"x\ny\",q\rr\n1\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["a"], "x\ny");
        assert_eq!(rows[0]["b"], "qr");
        assert_eq!(rows[1]["c"], "");
        // every embedded table without quoted line breaks: one row per non-empty line
        for t in [
            include_str!("../data/jetpack.csv"),
            include_str!("../data/modules.csv"),
        ] {
            let quoted_newlines = t.split('"').skip(1).step_by(2).any(|q| q.contains('\n'));
            let lines = t.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
            if !quoted_newlines {
                assert_eq!(super::parse(t).len(), lines);
            }
        }
    }
}
