//! Sees through the generic wrappers a paste's real error comes in, before it is
//! normalised and matched: per-line log prefixes (vLLM's `(VllmWorker rank=0 pid=12)`
//! and `ERROR 05-12 10:11:12 [file.py:42]`, torchrun's `[rank0]:`, Python logging's
//! `ERROR:root:`, compose's `svc-1  | `, `kubectl logs --prefix`'s `[pod/NAME/CONTAINER] `,
//! a log line's leading date and level (`2025-06-01T10:00:00Z ERROR `,
//! `2025-06-01 10:00:00,123 - app - ERROR - `, Kubernetes' `… stderr F `), glog's `E0601 10:00:00.123456  42 file.cc:8] `, syslog's
//! `Jun 01 10:00:00 host prog[12]: `, srun's `3: `, BuildKit's `#12 3.456 ` and a reply's
//! `> ` quote marker), PowerShell's error record around a native command's output,
//! Windows paths (`C:\…\torch\lib\x.dll` becomes `C:/…/torch/lib/x.dll`, so the file
//! names and directories read as on Linux), and the source lines a Python traceback echoes
//! under each frame (the code, not the error), except a `raise`/`assert` line that carries
//! the message as a literal: it is the error's own text, and the only copy of it when the
//! paste stops before the exception line.
//! The exception lines themselves, the file names of the frames and every other line are
//! kept. Pure functions over text.

use std::borrow::Cow;

/// The paste with its wrappers seen through.
pub fn see_through(text: &str) -> Cow<'_, str> {
    if !might_wrap(text) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut echo_next = false;
    let powershell = text.contains("NativeCommandError");
    let mut in_record = false;
    let raws: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, &raw) in raws.iter().enumerate() {
        let (line, nl) = match raw.strip_suffix('\n') {
            Some(l) => (l.strip_suffix('\r').unwrap_or(l), "\n"),
            None => (raw, ""),
        };
        let line = if powershell {
            match powershell_line(line, &mut in_record) {
                Some(l) => l,
                None => continue,
            }
        } else {
            line
        };
        let line = strip_prefixes(line);
        // A traceback frame's source line follows its `File "…", line N, in f` line,
        // indented further; it is the frame's code, not an error.
        let frame = is_frame(line);
        if echo_next
            && !frame
            && indent(line) > 0
            && !looks_like_exception(line)
            && !raises_with_message(line)
            && !asserts_before_a_bare_assertion_error(line, raws.get(i + 1).copied())
        {
            echo_next = false;
            continue;
        }
        echo_next = frame;
        out.push_str(&windows_paths(line));
        out.push_str(nl);
    }
    out.into()
}

/// A line of a paste PowerShell wrapped in its error record (a native command's stderr:
/// `python : Traceback …`, then `At line:1 char:1`, the command echoed behind `+ `, its
/// `~~~` underline, `+ CategoryInfo …` and `+ FullyQualifiedErrorId : NativeCommandError`):
/// the command's own text, or `None` for the record's lines.
fn powershell_line<'a>(line: &'a str, in_record: &mut bool) -> Option<&'a str> {
    let t = line.trim_start();
    if t.starts_with("At line:") && t.contains(" char:") {
        *in_record = true;
        return None;
    }
    if let Some(rest) = t.strip_prefix('+') {
        let rest = rest.trim_start();
        if *in_record
            || rest.starts_with("CategoryInfo")
            || rest.starts_with("FullyQualifiedErrorId")
        {
            if rest.starts_with("FullyQualifiedErrorId") {
                *in_record = false;
            }
            return None;
        }
    }
    // `python : Traceback (most recent call last):`: the command's name before its text
    match line.split_once(" : ") {
        Some((cmd, text))
            if !cmd.is_empty()
                && cmd
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')) =>
        {
            Some(text)
        }
        _ => Some(line),
    }
}

/// Whether any wrapper form may be present (most pastes need no work).
fn might_wrap(text: &str) -> bool {
    text.contains("NativeCommandError")
        || text.contains("File \"")
        || text.contains(":\\")
        || text.contains("pid=")
        || text.contains("[rank")
        || text.contains(":root:")
        || text.contains(" | ")
        || text.contains("] ")
        || text.starts_with(['>', '#'])
        || text.contains("\n#")
        || text.contains("\n>")
        || text.lines().any(starts_like_log)
}

/// A reply's quote marker: `> ` (Markdown, e-mail), once per level of quoting. A Python
/// prompt (`>>> `) is not one.
fn quote_prefix(line: &str) -> Option<&str> {
    if line == ">" {
        return Some("");
    }
    line.strip_prefix("> ")
}

/// A line that may open with a date, a glog or syslog header or a task number.
fn starts_like_log(line: &str) -> bool {
    let b = line.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'I' | b'W' | b'E' | b'F') => b.get(1).is_some_and(u8::is_ascii_digit),
        Some(b'[') => b.get(1).is_some_and(u8::is_ascii_digit),
        Some(_) => MONTHS.iter().any(|m| line.starts_with(m)),
        None => false,
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `  File "/x/y.py", line 12, in f` (also without `, in f`).
fn is_frame(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("File \"") && t.contains("\", line ")
}

/// A source line that raises with a literal message (`raise RuntimeError("…")`,
/// `assert SM89_ENABLED, "…"`): the message is the error's own text.
fn raises_with_message(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with("raise ") || t.starts_with("assert ")) && (t.contains('"') || t.contains('\''))
}

/// An `assert` source line the traceback ends on with a bare `AssertionError` (no message):
/// the asserted condition (`assert is_sm100_supported() or is_sm90_supported()`) is then the
/// only text that says what failed.
fn asserts_before_a_bare_assertion_error(line: &str, next: Option<&str>) -> bool {
    line.trim_start().starts_with("assert ")
        && next.is_some_and(|n| strip_prefixes(n).trim() == "AssertionError")
}

/// `RuntimeError: …`, `torch.OutOfMemoryError: …`: an exception's own line.
fn looks_like_exception(line: &str) -> bool {
    let t = line.trim_start();
    let Some((name, _)) = t.split_once(": ") else {
        return false;
    };
    !name.is_empty()
        && !name.contains(' ')
        && (name.ends_with("Error") || name.ends_with("Exception") || name.ends_with("Warning"))
}

/// Removes the log prefixes at the start of a line, repeatedly (a vLLM line carries a
/// process prefix, then a level, date and source prefix).
pub fn strip_prefixes(mut line: &str) -> &str {
    for _ in 0..4 {
        let next = quote_prefix(line)
            .or_else(|| process_prefix(line))
            .or_else(|| rank_prefix(line))
            .or_else(|| level_prefix(line))
            .or_else(|| logging_prefix(line))
            .or_else(|| compose_prefix(line))
            .or_else(|| kube_prefix(line))
            .or_else(|| dated_prefix(line))
            .or_else(|| glog_prefix(line))
            .or_else(|| syslog_prefix(line))
            .or_else(|| task_prefix(line))
            .or_else(|| buildkit_prefix(line));
        match next {
            Some(rest) => line = rest,
            None => break,
        }
    }
    line
}

/// Docker BuildKit's plain progress: `#12 3.456 ` (the step, then seconds since it began).
fn buildkit_prefix(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    (b.first() == Some(&b'#')).then_some(())?;
    let mut i = 1;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    (i > 1 && b.get(i) == Some(&b' ')).then_some(())?;
    i += 1;
    let start = i;
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
        i += 1;
    }
    (i > start && b[start..i].contains(&b'.') && b.get(i) == Some(&b' ')).then_some(())?;
    line.get(i + 1..)
}

/// `(VllmWorker rank=0 pid=123) `, `(EngineCore_0 pid=9) `, `(RayWorkerWrapper pid=1, ip=10.0.0.2) `.
fn process_prefix(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('(')?;
    let close = rest.find(')')?;
    let inner = &rest[..close];
    let name = inner.split([' ', ',']).next()?;
    let named = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !named || !inner.contains("pid=") || close > 80 {
        return None;
    }
    Some(rest[close + 1..].trim_start())
}

/// `[rank0]: `, `[rank12]:[W123 …] ` (torchrun), `[default0]: `.
fn rank_prefix(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find("]:")?;
    let tag = &rest[..close];
    let digits = tag.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let is_rank = (tag.starts_with("rank") || tag.starts_with("default"))
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit());
    is_rank.then(|| rest[close + 2..].trim_start())
}

const LEVELS: &[&str] = &[
    "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "CRITICAL", "FATAL",
];

/// `ERROR 05-12 10:11:12 [multiproc_executor.py:123] ` (vLLM's logger).
fn level_prefix(line: &str) -> Option<&str> {
    let (level, rest) = line.split_once(' ')?;
    if !LEVELS.contains(&level) {
        return None;
    }
    let rest = rest.trim_start();
    let (date, rest) = rest.split_once(' ')?;
    let (time, rest) = rest.split_once(' ')?;
    let dated = date.len() == 5 && date.as_bytes()[2] == b'-' && time.contains(':');
    let src = rest.strip_prefix('[')?;
    let close = src.find("] ")?;
    (dated && src[..close].contains(".py:")).then(|| src[close + 2..].trim_start())
}

/// `ERROR:root:`, `WARNING:vllm.engine:` (Python logging's default format).
fn logging_prefix(line: &str) -> Option<&str> {
    let (level, rest) = line.split_once(':')?;
    if !LEVELS.contains(&level) {
        return None;
    }
    let (logger, rest) = rest.split_once(':')?;
    let named = !logger.is_empty()
        && logger
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    named.then_some(rest)
}

/// `[pod/trainer-0/main] ` (`kubectl logs --prefix`: the pod, or another kind of object,
/// and the container).
fn kube_prefix(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find("] ")?;
    let mut parts = rest[..close].split('/');
    let kind = parts.next()?;
    let named = KUBE_KINDS.contains(&kind)
        && parts.clone().count() == 2
        && parts.all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        });
    named.then(|| &rest[close + 2..])
}

/// The objects `kubectl logs` names in its prefix.
const KUBE_KINDS: &[&str] = &[
    "pod",
    "deployment",
    "job",
    "statefulset",
    "daemonset",
    "replicaset",
];

/// `web-1  | ` (docker compose's service prefix).
fn compose_prefix(line: &str) -> Option<&str> {
    let (svc, rest) = line.split_once(" | ")?;
    let svc = svc.trim_end();
    let named = !svc.is_empty()
        && svc.len() <= 40
        && svc
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    named.then_some(rest)
}

/// Length of `digits` ASCII digits at the start of `b` (None when fewer).
fn digits(b: &[u8], n: usize) -> Option<usize> {
    (b.len() >= n && b[..n].iter().all(u8::is_ascii_digit)).then_some(n)
}

/// Bytes of a `HH:MM:SS` time (with `.fff`/`,fff` fractions) at the start of `b`.
fn clock(b: &[u8]) -> Option<usize> {
    digits(b, 2)?;
    (b.get(2) == Some(&b':') && b.get(5) == Some(&b':')).then_some(())?;
    digits(&b[3..], 2)?;
    digits(&b[6..], 2)?;
    let mut i = 8;
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    Some(i)
}

/// Bytes of an ISO-like date and time (`2025-06-01T10:00:00.123Z`, `2025/06/01 10:00:00,5
/// +0200`) at the start of `b`.
fn date_time(b: &[u8]) -> Option<usize> {
    digits(b, 4)?;
    let sep = *b.get(4)?;
    (matches!(sep, b'-' | b'/') && b.get(7) == Some(&sep)).then_some(())?;
    digits(&b[5..], 2)?;
    digits(&b[8..], 2)?;
    matches!(b.get(10), Some(b'T' | b' ')).then_some(())?;
    let mut i = 11 + clock(b.get(11..)?)?;
    // `… 10:00:00 +0200`: a zone after a space
    if b.get(i) == Some(&b' ')
        && matches!(b.get(i + 1), Some(b'+' | b'-'))
        && digits(&b[i + 2..], 4).is_some()
    {
        i += 1;
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+' | b'-') if digits(&b[i + 1..], 2).is_some() => {
            i += 3;
            if b.get(i) == Some(&b':') {
                i += 1;
            }
            if digits(&b[i..], 2).is_some() {
                i += 2;
            }
        }
        _ => {}
    }
    Some(i)
}

/// A line's leading date and time (bare or in brackets), then what log formats put
/// after it: Kubernetes' `stdout F ` / `stderr P `, Python logging's `name - LEVEL - `, a
/// bare or bracketed level. A date alone is not enough: something must follow it.
fn dated_prefix(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let bracketed = b.first() == Some(&b'[');
    let at = usize::from(bracketed);
    let mut i = at + date_time(&b[at..])?;
    if bracketed {
        (b.get(i) == Some(&b']')).then_some(())?;
        i += 1;
    }
    let rest = line.get(i..)?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut rest = rest.trim_start();
    for stream in ["stdout F ", "stderr F ", "stdout P ", "stderr P "] {
        if let Some(r) = rest.strip_prefix(stream) {
            return Some(r.trim_start());
        }
    }
    rest = rest.strip_prefix("- ").unwrap_or(rest);
    // `name - LEVEL - ` (Python logging's common format)
    if let Some((name, after)) = rest.split_once(" - ") {
        if !name.contains(' ') {
            if let Some(r) = level_word(after) {
                return Some(r);
            }
        }
    }
    // `error: texture is not a template`, `FATAL: …`: a label the message itself carries
    // (a compiler's, a tool's) stays; a log's own level (`ERROR `, `[error] `) goes
    let labelled =
        !rest.starts_with('[') && rest.split(' ').next().is_some_and(|w| w.ends_with(':'));
    if labelled {
        return Some(rest);
    }
    level_word(rest).or(Some(rest))
}

/// `ERROR `, `[ERROR] `, `ERROR - `, `error: ` at the start of `s`: what follows it.
fn level_word(s: &str) -> Option<&str> {
    let (bracketed, body) = match s.strip_prefix('[') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let word = body
        .split([' ', ']', ':'])
        .next()
        .filter(|w| LEVELS.iter().any(|l| l.eq_ignore_ascii_case(w)))?;
    let mut rest = &body[word.len()..];
    if bracketed {
        rest = rest.strip_prefix(']')?;
    }
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let rest = rest.trim_start();
    Some(rest.strip_prefix("- ").unwrap_or(rest))
}

/// glog's `E0601 10:00:00.123456  4242 worker.cc:88] ` (TensorFlow, Paddle, XLA).
fn glog_prefix(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    matches!(b.first(), Some(b'I' | b'W' | b'E' | b'F')).then_some(())?;
    digits(&b[1..], 4)?;
    (b.get(5) == Some(&b' ')).then_some(())?;
    clock(b.get(6..)?)?;
    let close = line.find("] ")?;
    let header = &line[..close];
    (close < 120 && header.contains(':') && header.split_whitespace().count() == 4)
        .then(|| line[close + 2..].trim_start())
}

const MONTHS: &[&str] = &[
    "Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ", "Aug ", "Sep ", "Oct ", "Nov ", "Dec ",
];

/// syslog's and journalctl's `Jun 01 10:00:00 host prog[1234]: ` (also `host kernel: `).
fn syslog_prefix(line: &str) -> Option<&str> {
    MONTHS.iter().any(|m| line.starts_with(m)).then_some(())?;
    let rest = line[4..].trim_start();
    let day = rest.find(' ')?;
    (day <= 2 && rest[..day].bytes().all(|c| c.is_ascii_digit())).then_some(())?;
    let rest = &rest[day + 1..];
    let t = clock(rest.as_bytes())?;
    let rest = rest[t..].strip_prefix(' ')?;
    let (_host, rest) = rest.split_once(' ')?;
    let (prog, after) = rest.split_once(": ")?;
    let named = !prog.is_empty()
        && prog.len() <= 60
        && !prog.contains(' ')
        && prog
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_-.[]/@".contains(&c));
    named.then(|| after.trim_start())
}

/// srun's and torchrun's (`--tee`) task number: `3: `, `12: `.
fn task_prefix(line: &str) -> Option<&str> {
    let (n, rest) = line.split_once(": ")?;
    (!n.is_empty() && n.len() <= 4 && n.bytes().all(|c| c.is_ascii_digit())).then_some(rest)
}

/// Backslashes inside Windows paths (`C:\x\y.dll`, `.\lib\z.pyd`) become slashes.
pub fn windows_paths(line: &str) -> Cow<'_, str> {
    let b = line.as_bytes();
    let drive = |i: usize| {
        i + 2 < b.len()
            && b[i].is_ascii_alphabetic()
            && b[i + 1] == b':'
            && b[i + 2] == b'\\'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
    };
    let Some(start) = (0..b.len()).find(|&i| drive(i)) else {
        return line.into();
    };
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..start]);
    let mut in_path = false;
    for (i, c) in line[start..].char_indices() {
        let at = start + i;
        if drive(at) {
            in_path = true;
        }
        if in_path && (c == '"' || c == '\'' || c == ' ' && !next_is_path_part(&line[at..])) {
            in_path = false;
        }
        out.push(if in_path && c == '\\' { '/' } else { c });
    }
    out.into()
}

/// Whether a space inside a path continues it (`Program Files\…`, `NVIDIA GPU Computing
/// Toolkit\…`): another backslash follows within four words, before any quote.
fn next_is_path_part(rest: &str) -> bool {
    let Some(next) = rest[1..].find('\\') else {
        return false;
    };
    let gap = &rest[1..1 + next];
    !gap.contains(['"', '\'']) && gap.matches(' ').count() < 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_worker_prefixes_are_removed() {
        let l = "(VllmWorker rank=0 pid=1234) ERROR 05-12 10:11:12 [multiproc_executor.py:470] RuntimeError: CUDA error: an illegal memory access was encountered";
        assert_eq!(
            strip_prefixes(l),
            "RuntimeError: CUDA error: an illegal memory access was encountered"
        );
        let l = "(EngineCore_0 pid=77) INFO 01-02 03:04:05 [core.py:61] Initializing";
        assert_eq!(strip_prefixes(l), "Initializing");
        let l = "(RayWorkerWrapper pid=9, ip=10.0.0.2) torch.OutOfMemoryError: CUDA out of memory.";
        assert_eq!(
            strip_prefixes(l),
            "torch.OutOfMemoryError: CUDA out of memory."
        );
    }

    #[test]
    fn kubectl_prefixes_are_removed_and_other_brackets_kept() {
        assert_eq!(
            strip_prefixes("[pod/trainer-0/main] RuntimeError: CUDA error: out of memory"),
            "RuntimeError: CUDA error: out of memory"
        );
        assert_eq!(
            strip_prefixes("[job/finetune/worker] [rank1]: NCCL WARN x"),
            "NCCL WARN x"
        );
        for kept in [
            "[pod/only-pod] x",
            "[W socket.cpp:601] [c10d] x",
            "[pod/a b/c] x",
            "[nvidia/cuda/12] x",
        ] {
            assert_eq!(strip_prefixes(kept), kept);
        }
    }

    #[test]
    fn torchrun_logging_and_compose_prefixes_are_removed() {
        assert_eq!(
            strip_prefixes("[rank0]: RuntimeError: NCCL error"),
            "RuntimeError: NCCL error"
        );
        assert_eq!(strip_prefixes("ERROR:root:CUDA error"), "CUDA error");
        assert_eq!(
            strip_prefixes("ollama-1  | Error: llama runner process has terminated"),
            "Error: llama runner process has terminated"
        );
        // Not prefixes: a plain sentence, a tuple, a table row.
        for l in [
            "(this is fine) pid=3",
            "[rank] : x",
            "ERROR: could not find a version",
            "| 0  NVIDIA H200  On | 00000000:00:06.0 Off |",
        ] {
            assert_eq!(strip_prefixes(l), l, "{l}");
        }
    }

    #[test]
    fn log_file_line_headers_are_removed() {
        let msg = "RuntimeError: No CUDA GPUs are available";
        for prefix in [
            "2025-06-01T10:00:00.123Z ERROR ",
            "2025-06-01 10:00:00,123 - app.worker - ERROR - ",
            "2025-06-01T10:00:00.123456789Z stderr F ",
            "2025/06/01 10:00:00 +0200 [error] ",
            "[2025-06-01 10:00:00] [ERROR] ",
            "2025-06-01 10:00:00.5 ",
            "E0601 10:00:00.123456  4242 worker.cc:88] ",
            "Jun 01 10:00:00 gpu-node-3 app[1234]: ",
            "Jun  1 10:00:00 gpu-node-3 kernel: ",
            "3: ",
            "0: [rank0]: ",
            "> ",
            "> > ",
            "#12 3.456 ",
            "2025-06-01T10:00:00.1234567Z ",
        ] {
            let l = format!("{prefix}{msg}");
            assert_eq!(strip_prefixes(&l), msg, "{l}");
        }
        // A label the message carries stays after a date; a log's own level goes.
        assert_eq!(
            strip_prefixes("2025-06-01T10:00:00.1234567Z error: texture is not a template"),
            "error: texture is not a template"
        );
        assert_eq!(
            strip_prefixes("2025-06-01T10:00:00Z ERROR RuntimeError: x"),
            "RuntimeError: x"
        );
        // Not headers: a bare date, a version, a long number, words after a month.
        for l in [
            "2025-06-01T10:00:00Z",
            "2025-06-01: released",
            "12345: not a task",
            "E1234 is an error code",
            "Jun 2025 release notes: none",
            "3:00 PM",
            ">>> import torch",
            "Fatal error: 12.4",
            "#12 is the issue",
            "# nvidia-smi",
        ] {
            assert_eq!(strip_prefixes(l), l, "{l}");
        }
    }

    #[test]
    fn powershell_s_error_record_is_not_the_paste() {
        let t = "python : Traceback (most recent call last):\nAt line:1 char:1\n+ python app.py\n+ ~~~~~~~~~~~~~\n    + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException\n    + FullyQualifiedErrorId : NativeCommandError\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n";
        assert_eq!(
            see_through(t),
            "Traceback (most recent call last):\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        );
    }

    #[test]
    fn windows_paths_read_as_slashes() {
        let l = r#"OSError: [WinError 126] The specified module could not be found. Error loading "C:\Users\me\miniconda3\Lib\site-packages\torch\lib\cudnn_ops64_9.dll" or one of its dependencies."#;
        let w = windows_paths(l);
        assert!(
            w.contains("C:/Users/me/miniconda3/Lib/site-packages/torch/lib/cudnn_ops64_9.dll\""),
            "{w}"
        );
        assert!(w.ends_with("or one of its dependencies."));
        let l = r"Could not locate C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin\cublas64_12.dll now";
        assert_eq!(
            windows_paths(l),
            "Could not locate C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/bin/cublas64_12.dll now"
        );
        assert_eq!(windows_paths(r"a\b no drive"), r"a\b no drive");
    }

    #[test]
    fn a_traceback_keeps_its_frames_and_error_and_drops_the_echoed_code() {
        let t = "Traceback (most recent call last):\n  File \"/x/train.py\", line 3, in <module>\n    model.cuda()\n  File \"/y/torch/cuda/__init__.py\", line 417, in _lazy_init\n    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available\n";
        let s = see_through(t);
        assert_eq!(
            s,
            "Traceback (most recent call last):\n  File \"/x/train.py\", line 3, in <module>\n  File \"/y/torch/cuda/__init__.py\", line 417, in _lazy_init\nRuntimeError: No CUDA GPUs are available\n"
        );
        // An indented exception line right after a frame is kept.
        let t = "  File \"a.py\", line 1\n    RuntimeError: CUDA error: out of memory\n";
        assert_eq!(see_through(t), t);
        // So is a raise or assert with its message (the paste may stop before the exception
        // line); a raise without a literal message is code like any other.
        let t = "  File \"/s/core.py\", line 666, in f\n    assert SM89_ENABLED, \"SM89 kernel is not available.\"\n";
        assert_eq!(see_through(t), t);
        let t = "  File \"/s/core.py\", line 9, in g\n    raise RuntimeError(f'no kernel for {arch}')\n";
        assert_eq!(see_through(t), t);
        let t = "  File \"/s/core.py\", line 9, in g\n    raise err\n";
        assert_eq!(see_through(t), "  File \"/s/core.py\", line 9, in g\n");
        // An assert the traceback ends on with a bare AssertionError is the only text that
        // says what failed; one followed by anything else is code.
        let t = "  File \"/s/fp8.py\", line 788, in __init__\n    assert is_sm100_supported() or is_sm90_supported()\nAssertionError\n";
        assert_eq!(see_through(t), t);
        let t = "  File \"/s/fp8.py\", line 788, in __init__\n    assert x is not None\n  File \"/s/g.py\", line 2, in g\n";
        assert_eq!(
            see_through(t),
            "  File \"/s/fp8.py\", line 788, in __init__\n  File \"/s/g.py\", line 2, in g\n"
        );
        // Text without any wrapper is returned as it is.
        assert!(matches!(
            see_through("CUDA error: out of memory"),
            Cow::Borrowed(_)
        ));
    }
}
