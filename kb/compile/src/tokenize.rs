//! Tokenizers for error text, shared by `build.rs` (index time) and search (query time).
//!
//! `errtok` keeps identifiers whole (`sm_89`, `libcudart.so.12`, `CUDA_ERROR_NO_BINARY_FOR_GPU`,
//! `cudaErrorInsufficientDriver`) and joins `Xid 79` / `Xid: 79` / `Xid (PCI:0000:01:00): 79`
//! into one token `xid_79`. The second field uses tantivy's `default` tokenizer, which splits
//! identifiers into their parts. Tokenizers are not persisted by tantivy, so both sides call
//! [`register`].

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Name of the whole-identifier tokenizer.
pub const ERRTOK: &str = "errtok";
/// Name of the splitting tokenizer.
pub const SPLITTOK: &str = "splittok";

/// Longest token kept.
const MAX_TOKEN: usize = 64;

fn is_tok(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Splits `text` into whole-identifier tokens: `(lowercased text, byte from, byte to)`.
pub fn err_tokens(text: &str) -> Vec<(String, usize, usize)> {
    let b = text.as_bytes();
    let mut raw: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is_tok(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() {
            let joiner = (b[i] == b'.' || b[i] == b'-') && i + 1 < b.len() && is_tok(b[i + 1]);
            if !(is_tok(b[i]) || joiner) {
                break;
            }
            i += 1;
        }
        raw.push((start, i));
    }
    let mut out: Vec<(String, usize, usize)> = Vec::with_capacity(raw.len());
    let mut k = 0;
    while k < raw.len() {
        let (s, e) = raw[k];
        let word = &text[s..e];
        if word.eq_ignore_ascii_case("xid") {
            if let Some((num, end, skip)) = xid_number(text, e, &raw[k + 1..]) {
                out.push((format!("xid_{num}"), s, end));
                k += 1 + skip;
                continue;
            }
        }
        if e - s <= MAX_TOKEN {
            out.push((word.to_ascii_lowercase(), s, e));
        }
        k += 1;
    }
    out
}

/// After a `xid` token ending at `end`, finds the Xid number: `Xid 79`, `Xid: 79`,
/// `Xid (PCI:0000:01:00): 79`. Returns (number, byte end, tokens consumed).
fn xid_number(text: &str, end: usize, rest: &[(usize, usize)]) -> Option<(String, usize, usize)> {
    let b = text.as_bytes();
    let mut p = end;
    while p < b.len() && (b[p] == b' ' || b[p] == b':' || b[p] == b'=' || b[p] == b'#') {
        p += 1;
    }
    if p < b.len() && b[p] == b'(' {
        // skip a "(PCI:0000:01:00)" group, at most 40 bytes
        let close = text[p..].find(')').filter(|&c| c < 40)?;
        p += close + 1;
        while p < b.len() && (b[p] == b' ' || b[p] == b':') {
            p += 1;
        }
    }
    let (idx, &(s, e)) = rest.iter().enumerate().find(|(_, &(s, _))| s >= p)?;
    if s != p {
        return None;
    }
    let num = &text[s..e];
    if num.is_empty() || num.len() > 4 || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((num.to_string(), e, idx + 1))
}

/// The tantivy tokenizer wrapping [`err_tokens`].
#[derive(Clone, Default)]
pub struct ErrTokenizer {
    token: Token,
}

/// Token stream of [`ErrTokenizer`].
pub struct ErrTokenStream<'a> {
    tokens: Vec<(String, usize, usize)>,
    pos: usize,
    token: &'a mut Token,
}

impl Tokenizer for ErrTokenizer {
    type TokenStream<'a> = ErrTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> ErrTokenStream<'a> {
        self.token.reset();
        ErrTokenStream {
            tokens: err_tokens(text),
            pos: 0,
            token: &mut self.token,
        }
    }
}

impl TokenStream for ErrTokenStream<'_> {
    fn advance(&mut self) -> bool {
        let Some((t, s, e)) = self.tokens.get(self.pos) else {
            return false;
        };
        self.token.text.clear();
        self.token.text.push_str(t);
        self.token.offset_from = *s;
        self.token.offset_to = *e;
        self.token.position = self.pos;
        self.token.position_length = 1;
        self.pos += 1;
        true
    }
    fn token(&self) -> &Token {
        self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// The whole-identifier analyzer.
pub fn errtok() -> TextAnalyzer {
    TextAnalyzer::builder(ErrTokenizer::default()).build()
}

/// The splitting analyzer (words and numbers, lowercased).
pub fn splittok() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .build()
}

/// Registers both analyzers on an index (required before opening or writing it).
pub fn register(index: &tantivy::Index) {
    index.tokenizers().register(ERRTOK, errtok());
    index.tokenizers().register(SPLITTOK, splittok());
}

/// Tokens of `text` by the splitting analyzer.
pub fn split_tokens(text: &str) -> Vec<String> {
    let mut a = splittok();
    let mut ts = a.token_stream(text);
    let mut out = Vec::new();
    while ts.advance() {
        out.push(ts.token().text.clone());
    }
    out
}
