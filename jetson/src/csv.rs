//! A minimal RFC 4180 CSV reader for the embedded data tables
//! (`jetson/data/*.csv` and the agent's tables): quoted fields, doubled quotes, CRLF.
//! [`table`] gives the rows under one header ([`TableRow::get`] by column name);
//! [`parse`] gives a map from header name to value per row.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// A parsed table: the header row and its records, without a map per record (the
/// tables are read on every search that uses machine facts). A field borrows the text
/// unless quoting or a carriage return made it differ from it.
#[derive(Debug, Clone, Default)]
pub struct Table<'a> {
    header: Vec<Cow<'a, str>>,
    rows: Vec<Vec<Cow<'a, str>>>,
}

/// One record of a [`Table`]: its fields by header name.
#[derive(Debug, Clone, Copy)]
pub struct TableRow<'a> {
    header: &'a [Cow<'a, str>],
    values: &'a [Cow<'a, str>],
}

impl<'a> TableRow<'a> {
    /// The field under header `k` (empty when the record is shorter than the header);
    /// `None` when no column is named `k`.
    pub fn get(&self, k: &str) -> Option<&'a str> {
        let i = self.header.iter().position(|h| h == k)?;
        Some(self.values.get(i).map_or("", |v| v.as_ref()))
    }
}

impl Table<'_> {
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
                .map(|h| (h.to_string(), r.get(h).unwrap_or_default().to_string()))
                .collect()
        })
        .collect()
}

/// Parse CSV text into a [`Table`] (the reading [`parse`] does, without the maps).
pub fn table(text: &str) -> Table<'_> {
    let b = text.as_bytes();
    let mut rows: Vec<Vec<Cow<'_, str>>> = Vec::new();
    let mut row: Vec<Cow<'_, str>> = Vec::new();
    // The current field: `owned` once a quote or a CR made it differ from the text,
    // and the unquoted run `text[start..]` not yet added to it.
    let mut owned: Option<String> = None;
    let mut start = 0;
    let mut in_quotes = false;
    let mut any = false;
    let mut i = 0;
    // Only the delimiters are looked at one by one (the tables are read on every
    // search that uses machine facts); every position sliced is an ASCII byte's.
    while i < b.len() {
        any = true;
        if in_quotes {
            let f = owned.get_or_insert_with(String::new);
            match b[i..].iter().position(|&c| c == b'"') {
                Some(k) => {
                    f.push_str(&text[i..i + k]);
                    i += k + 1;
                    if b.get(i) == Some(&b'"') {
                        f.push('"');
                        i += 1;
                    } else {
                        in_quotes = false;
                    }
                }
                None => {
                    f.push_str(&text[i..]);
                    i = b.len();
                }
            }
            start = i;
            continue;
        }
        let Some(k) = b[i..]
            .iter()
            .position(|&c| matches!(c, b'"' | b',' | b'\r' | b'\n'))
            .map(|k| i + k)
        else {
            break;
        };
        match b[k] {
            b'"' => {
                owned
                    .get_or_insert_with(String::new)
                    .push_str(&text[start..k]);
                in_quotes = true;
                start = k + 1;
            }
            b'\r' => {
                owned
                    .get_or_insert_with(String::new)
                    .push_str(&text[start..k]);
                start = k + 1;
            }
            c => {
                row.push(field(text, &mut owned, start, k));
                start = k + 1;
                if c == b'\n' {
                    rows.push(std::mem::take(&mut row));
                    any = false;
                }
            }
        }
        i = k + 1;
    }
    if any {
        row.push(field(text, &mut owned, start, b.len()));
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

/// The field that ends at `end`: the text itself when nothing changed it.
fn field<'a>(text: &'a str, owned: &mut Option<String>, start: usize, end: usize) -> Cow<'a, str> {
    let run = &text[start..end];
    match owned.take() {
        Some(mut f) => {
            f.push_str(run);
            Cow::Owned(f)
        }
        None => Cow::Borrowed(run),
    }
}

#[cfg(test)]
mod tests {
    /// The reader before fields borrowed the text: one `String` per field, built
    /// char by char between delimiters (kept here to check the borrowing one against).
    fn reference(text: &str) -> Vec<Vec<String>> {
        let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
        let (mut in_quotes, mut any) = (false, false);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            any = true;
            match (in_quotes, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => in_quotes = false,
                (true, c) => field.push(c),
                (false, '"') => in_quotes = true,
                (false, ',') => row.push(std::mem::take(&mut field)),
                (false, '\n') => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                    any = false;
                }
                (false, '\r') => {}
                (false, c) => field.push(c),
            }
        }
        if any {
            row.push(field);
            rows.push(row);
        }
        rows
    }

    /// Every text of up to 7 symbols over `a,"\r\n é` (78 125 of each length 7 among
    /// them, a seeded walk over the rest): the same header and rows as the reference.
    #[test]
    fn borrowing_reader_reads_what_the_reference_reads() {
        let alphabet = ['a', ',', '"', '\r', '\n', ' ', 'é'];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut n = 0;
        for len in 0..=9usize {
            let count = if len <= 7 {
                alphabet.len().pow(len as u32)
            } else {
                20_000
            };
            for k in 0..count {
                let text: String = (0..len)
                    .map(|j| {
                        if len <= 7 {
                            alphabet[(k / alphabet.len().pow(j as u32)) % alphabet.len()]
                        } else {
                            seed ^= seed << 13;
                            seed ^= seed >> 7;
                            seed ^= seed << 17;
                            alphabet[(seed % alphabet.len() as u64) as usize]
                        }
                    })
                    .collect();
                let want = reference(&text);
                let got = super::table(&text);
                let mut it = want.into_iter();
                let header: Vec<String> = it.next().unwrap_or_default();
                let rows: Vec<Vec<String>> = it
                    .filter(|r| r.iter().any(|f| !f.trim().is_empty()))
                    .collect();
                let got_header: Vec<String> = got.header.iter().map(|h| h.to_string()).collect();
                let got_rows: Vec<Vec<String>> = got
                    .rows
                    .iter()
                    .map(|r| r.iter().map(|f| f.to_string()).collect())
                    .collect();
                assert_eq!((got_header, got_rows), (header, rows), "{text:?}");
                n += 1;
            }
        }
        assert!(n > 900_000, "{n} texts");
    }

    /// An unquoted field is the text itself: reading a table copies no plain field.
    #[test]
    fn plain_fields_borrow_the_text() {
        let t = super::table("a,b\nx,\"y\"\n");
        let row = &t.rows[0];
        assert!(matches!(row[0], std::borrow::Cow::Borrowed("x")));
        assert!(matches!(row[1], std::borrow::Cow::Owned(ref y) if y == "y"));
    }

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
