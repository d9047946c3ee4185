//! Endless and special inputs stay bounded (issue 12 §1): a 100 MB paste on
//! stdin is answered with a small peak RSS, `/dev/zero` as a fingerprint or an
//! eval file is one line and exit 2. In its own test binary, so the peak RSS
//! of its children is this test's alone.
#![allow(clippy::disallowed_methods)] // runs the binary

use std::process::Command;

fn gpukb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpukb"))
}

#[test]
fn endless_and_special_inputs_are_bounded_with_one_line_errors() {
    use std::io::Write as _;
    use std::process::Stdio;
    // 100 MB of one repeated error on stdin: read whole, answered, bounded.
    let mut child = gpukb()
        .args(["search", "--no-detect", "--limit", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
            .repeat(4096);
        let mut sent = 0usize;
        while sent < 100 << 20 {
            if stdin.write_all(&line).is_err() {
                break;
            }
            sent += line.len();
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("out-of-memory"));
    // Peak RSS of the largest child so far (every gpukb this test binary ran,
    // all of which must stay small): the 100 MB paste was not held in memory.
    let peak_kb = children_peak_rss_kb();
    assert!(
        peak_kb < 64 * 1024,
        "peak RSS {peak_kb} KB for a 100 MB paste"
    );
    // /dev/zero as a fingerprint or an eval file: capped, one line, exit 2.
    for args in [
        vec!["doctor", "--fingerprint", "/dev/zero"],
        vec!["kb", "eval", "/dev/zero"],
    ] {
        let out = gpukb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("too large"), "{err}");
    }
}

/// `getrusage(RUSAGE_CHILDREN).ru_maxrss` in KB (Linux).
fn children_peak_rss_kb() -> i64 {
    #[repr(C)]
    struct Rusage {
        utime: [i64; 2],
        stime: [i64; 2],
        maxrss: i64,
        rest: [i64; 13],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    const RUSAGE_CHILDREN: i32 = -1;
    let mut r = Rusage {
        utime: [0; 2],
        stime: [0; 2],
        maxrss: 0,
        rest: [0; 13],
    };
    // SAFETY: getrusage fills the struct, whose layout matches Linux's struct rusage on 64-bit targets.
    let rc = unsafe { getrusage(RUSAGE_CHILDREN, &mut r) };
    assert_eq!(rc, 0);
    r.maxrss
}
