//! A bounded window over a pasted stream: whatever the size of the input
//! (an endless `yes`, a 100 MB log, `/dev/zero`), gpukb keeps the head, the
//! tail and the lines that look like errors from the middle (identical lines
//! once, with a count), in at most [`BUDGET`] bytes, reading up to
//! [`READ_LIMIT`] bytes and then stopping. Pure: bytes in, bytes out.

use std::collections::{HashMap, VecDeque};

/// Bytes kept from the start.
pub const HEAD: usize = 512 << 10;
/// Bytes kept from the end.
pub const TAIL: usize = 256 << 10;
/// Bytes of error-looking lines kept from the middle.
pub const SIGNAL: usize = 192 << 10;
/// At most this much of the window is kept in all (plus one partial line):
/// under the 1 MiB the search analyses.
pub const BUDGET: usize = HEAD + TAIL + SIGNAL;
/// A line longer than this is kept up to here.
pub const MAX_LINE: usize = 64 << 10;
/// Input beyond this many bytes is not read.
pub const READ_LIMIT: u64 = 1 << 30;

/// Words that make a middle line worth keeping.
const SIGNS: &[&[u8]] = &[
    b"rror",
    b"ERROR",
    b"ailed",
    b"FAIL",
    b"xception",
    b"Traceback",
    b"CUDA",
    b"cuda",
    b"NCCL",
    b"nccl",
    b"NVRM",
    b"Xid",
    b"nvidia",
    b"NVIDIA",
    b"cudnn",
    b"cuDNN",
    b"cublas",
    b"cuBLAS",
    b"torch",
    b"out of memory",
    b"assert",
    b"Segmentation",
    b"illegal",
    b"denied",
];

/// One automaton over [`SIGNS`], built once: a line is scanned once, not once
/// per sign with a searcher built each time.
fn signs() -> &'static aho_corasick::AhoCorasick {
    static A: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    A.get_or_init(|| {
        aho_corasick::AhoCorasick::new(SIGNS)
            .unwrap_or_else(|e| unreachable!("the signs are fixed byte strings: {e}"))
    })
}

/// The window, fed chunk by chunk.
#[derive(Debug, Default)]
pub struct PasteWindow {
    head: Vec<u8>,
    /// The current line being assembled after the head.
    line: Vec<u8>,
    tail: VecDeque<Vec<u8>>,
    tail_bytes: usize,
    signals: Vec<Vec<u8>>,
    counts: HashMap<Vec<u8>, usize>,
    signal_bytes: usize,
    skipped_bytes: u64,
    total: u64,
}

impl PasteWindow {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once [`READ_LIMIT`] bytes were fed: stop reading.
    pub fn full(&self) -> bool {
        self.total >= READ_LIMIT
    }

    /// Feeds the next bytes of the stream.
    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < HEAD {
            let take = (HEAD - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        while !chunk.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    self.extend_line(&chunk[..i]);
                    let line = std::mem::take(&mut self.line);
                    self.end_line(line);
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.extend_line(chunk);
                    break;
                }
            }
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.skipped_bytes += bytes.len().saturating_sub(room) as u64;
    }

    fn end_line(&mut self, line: Vec<u8>) {
        self.tail_bytes += line.len() + 1;
        self.tail.push_back(line);
        while self.tail_bytes > TAIL {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= old.len() + 1;
            self.consider(old);
        }
    }

    /// A line leaving the tail: keep it if it looks like an error.
    fn consider(&mut self, line: Vec<u8>) {
        if let Some(n) = self.counts.get_mut(&line) {
            *n += 1;
            return;
        }
        let signal = signs().is_match(&line);
        if signal && self.signal_bytes + line.len() < SIGNAL {
            self.signal_bytes += line.len() + 1;
            self.counts.insert(line.clone(), 1);
            self.signals.push(line);
        } else {
            self.skipped_bytes += line.len() as u64 + 1;
        }
    }

    /// The kept text: head, the middle's error lines (repeats counted), tail.
    pub fn finish(mut self) -> Vec<u8> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.tail.push_back(line);
        }
        let mut out = self.head;
        if !self.signals.is_empty() || self.skipped_bytes > 0 {
            out.extend_from_slice(
                b"\n[... gpukb kept only error-looking lines from the middle of the input ...]\n",
            );
        }
        for s in &self.signals {
            out.extend_from_slice(s);
            match self.counts.get(s) {
                Some(n) if *n > 1 => {
                    out.extend_from_slice(format!("   [repeated {n} times]\n").as_bytes())
                }
                _ => out.push(b'\n'),
            }
        }
        let n = self.tail.len();
        for (i, l) in self.tail.into_iter().enumerate() {
            out.extend_from_slice(&l);
            if i + 1 < n {
                out.push(b'\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_paste_comes_back_unchanged() {
        let mut w = PasteWindow::new();
        w.push(b"RuntimeError: CUDA error: no kernel image\nsecond line");
        assert_eq!(
            w.finish(),
            b"RuntimeError: CUDA error: no kernel image\nsecond line"
        );
    }

    #[test]
    fn an_endless_stream_is_kept_within_the_budget_with_repeats_counted() {
        let mut w = PasteWindow::new();
        let mut block = Vec::new();
        for i in 0..10_000 {
            block.extend_from_slice(format!("step {i} ok\n").as_bytes());
        }
        w.push(&block);
        for _ in 0..200 {
            w.push(b"noise line without anything\n".repeat(1000).as_slice());
            w.push(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
        }
        w.push(b"the last line");
        let out = w.finish();
        assert!(out.len() <= BUDGET + 4096, "{} bytes kept", out.len());
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("CUDA out of memory. Tried to allocate 2.00 GiB   [repeated"),
            "the middle's error line is kept once, counted"
        );
        assert!(text.ends_with("the last line"));
        assert!(text.starts_with("step 0 ok"));
    }

    #[test]
    fn a_stream_without_newlines_stays_bounded() {
        let mut w = PasteWindow::new();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            w.push(&zeros);
        }
        assert!(w.finish().len() <= HEAD + MAX_LINE + 256);
    }
}
