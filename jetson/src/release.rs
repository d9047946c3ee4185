//! `/etc/nv_tegra_release`, the L4T release stamp, in every format from R21
//! to R39.
//!
//! Line 1 is always `# R<major> (release), REVISION: <minor>.<patch>, GCID:
//! <build>, BOARD: <board>, EABI: aarch64, DATE: <date>`. Since R36 three more
//! lines follow (`# KERNEL_VARIANT: oot`, `TARGET_USERSPACE_LIB_DIR=nvidia`,
//! `TARGET_USERSPACE_LIB_DIR_PATH=...`). `BOARD:` is a build-target name, not
//! the SoC (`t186ref` is written on Xavier and on Orin under JetPack 5,
//! `generic` from R36 on), and the `DATE:` format changed in R39 (12-hour clock
//! with AM/PM), so only `R<n>` and `REVISION:` are trusted; the rest is kept
//! verbatim.

use serde::{Deserialize, Serialize};

use crate::error::{clip, JetsonError};
use crate::version::L4tVersion;

/// Everything in an `nv_tegra_release` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TegraRelease {
    /// R-major and REVISION combined.
    pub l4t: L4tVersion,
    /// The word in parentheses after `R<n>`: normally `release`.
    pub kind: String,
    /// `GCID:` build id.
    pub gcid: Option<String>,
    /// `BOARD:` value (`t210ref`, `t186ref`, `generic`): not the SoC.
    pub board: Option<String>,
    /// `EABI:` value (`aarch64`).
    pub eabi: Option<String>,
    /// `DATE:` value, verbatim (its format changed in R39).
    pub date: Option<String>,
    /// `# KERNEL_VARIANT:` (R36+: `oot`).
    pub kernel_variant: Option<String>,
    /// `TARGET_USERSPACE_LIB_DIR=` (R36+: `nvidia`).
    pub userspace_lib_dir: Option<String>,
    /// `TARGET_USERSPACE_LIB_DIR_PATH=` (R36+).
    pub userspace_lib_dir_path: Option<String>,
}

/// Parse the text of `/etc/nv_tegra_release`.
///
/// Leading blank lines, a UTF-8 BOM, CRLF line ends and trailing garbage are
/// tolerated; a file without a `# R<n> (...)` line with a numeric `REVISION:`
/// is an error.
pub fn parse_nv_tegra_release(text: &str) -> Result<TegraRelease, JetsonError> {
    let text = text.trim_start_matches('\u{feff}');
    if text
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .is_empty()
    {
        return Err(JetsonError::Empty {
            what: "nv_tegra_release".into(),
        });
    }
    let mut lines = text
        .lines()
        .map(|l| l.trim_end_matches(['\r', '\0']).trim())
        .filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let header = first
        .strip_prefix('#')
        .map(str::trim_start)
        .and_then(|s| s.strip_prefix('R'))
        .ok_or_else(|| JetsonError::NotTegraRelease {
            first_line: clip(first, 120),
        })?;
    let digits: String = header.chars().take_while(char::is_ascii_digit).collect();
    let major: u32 = match digits.parse() {
        Ok(m) if digits.len() <= 4 => m,
        _ => {
            return Err(JetsonError::NotTegraRelease {
                first_line: clip(first, 120),
            })
        }
    };
    let rest = header[digits.len()..].trim_start();
    let kind = rest
        .strip_prefix('(')
        .and_then(|r| r.split_once(')'))
        .map(|(k, _)| k.trim().to_string())
        .ok_or_else(|| JetsonError::NotTegraRelease {
            first_line: clip(first, 120),
        })?;

    let mut revision = None;
    let mut gcid = None;
    let mut board = None;
    let mut eabi = None;
    let mut date = None;
    // Fields are separated by ", "; DATE is last and is taken to end of line.
    let fields_part = rest.split_once(')').map(|(_, r)| r).unwrap_or("");
    let mut remaining = fields_part.trim_start_matches(',').trim();
    while !remaining.is_empty() {
        if let Some(d) = remaining.strip_prefix("DATE:") {
            date = Some(d.trim().to_string());
            break;
        }
        let (field, tail) = match remaining.split_once(',') {
            Some((f, t)) => (f, t),
            None => (remaining, ""),
        };
        if let Some((key, value)) = field.split_once(':') {
            let value = value.trim().to_string();
            match key.trim() {
                "REVISION" => revision = Some(value),
                "GCID" => gcid = Some(value),
                "BOARD" => board = Some(value),
                "EABI" => eabi = Some(value),
                _ => {}
            }
        }
        remaining = tail.trim();
    }
    let revision = revision.ok_or_else(|| JetsonError::BadRevision {
        line: clip(first, 120),
    })?;
    let mut rev = revision.split('.');
    let num = |s: Option<&str>| -> Option<u32> {
        let s = s?;
        if s.is_empty() || s.len() > 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let minor = num(rev.next()).ok_or_else(|| JetsonError::BadRevision {
        line: clip(first, 120),
    })?;
    let patch = match rev.next() {
        None => 0,
        Some(p) => num(Some(p)).ok_or_else(|| JetsonError::BadRevision {
            line: clip(first, 120),
        })?,
    };
    if rev.next().is_some() {
        return Err(JetsonError::BadRevision {
            line: clip(first, 120),
        });
    }

    let mut kernel_variant = None;
    let mut userspace_lib_dir = None;
    let mut userspace_lib_dir_path = None;
    for line in lines {
        if let Some(v) = line
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("KERNEL_VARIANT:"))
        {
            kernel_variant = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("TARGET_USERSPACE_LIB_DIR_PATH=") {
            userspace_lib_dir_path = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("TARGET_USERSPACE_LIB_DIR=") {
            userspace_lib_dir = Some(v.trim().to_string());
        }
    }

    Ok(TegraRelease {
        l4t: L4tVersion::new(major, minor, patch),
        kind,
        gcid,
        board,
        eabi,
        date,
        kernel_variant,
        userspace_lib_dir,
        userspace_lib_dir_path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verbatim first lines published in public issues and docs (see
    // tests/fixtures/jetson-*/SOURCE.md for the URLs).
    const R32_NANO: &str = "# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t210ref, EABI: aarch64, DATE: Fri Jun  9 04:25:08 UTC 2023\n";
    const R28_TX2: &str = "# R28 (release), REVISION: 2.1, GCID: 11272647, BOARD: t186ref, EABI: aarch64, DATE: Thu May 17 07:29:06 UTC 2018";
    const R35_ORIN: &str = "# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n";
    const R36: &str = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n";
    const R39: &str = "# R39 (release), REVISION: 2.1, GCID: 46758480, BOARD: generic, EABI: aarch64, DATE: Fri Aug  7 05:54:22 AM UTC 2026\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n";

    #[test]
    fn r32() {
        let r = parse_nv_tegra_release(R32_NANO).unwrap();
        assert_eq!(r.l4t, L4tVersion::new(32, 7, 4));
        assert_eq!(r.board.as_deref(), Some("t210ref"));
        assert_eq!(r.gcid.as_deref(), Some("33514132"));
        assert_eq!(r.date.as_deref(), Some("Fri Jun  9 04:25:08 UTC 2023"));
        assert_eq!(r.kernel_variant, None);
    }

    #[test]
    fn r28_and_r35() {
        assert_eq!(
            parse_nv_tegra_release(R28_TX2).unwrap().l4t,
            L4tVersion::new(28, 2, 1)
        );
        let r = parse_nv_tegra_release(R35_ORIN).unwrap();
        assert_eq!(r.l4t, L4tVersion::new(35, 3, 1));
        assert_eq!(r.board.as_deref(), Some("t186ref"));
    }

    #[test]
    fn r36_extra_lines() {
        let r = parse_nv_tegra_release(R36).unwrap();
        assert_eq!(r.l4t, L4tVersion::new(36, 4, 3));
        assert_eq!(r.board.as_deref(), Some("generic"));
        assert_eq!(r.kernel_variant.as_deref(), Some("oot"));
        assert_eq!(r.userspace_lib_dir.as_deref(), Some("nvidia"));
        assert_eq!(
            r.userspace_lib_dir_path.as_deref(),
            Some("usr/lib/aarch64-linux-gnu/nvidia")
        );
    }

    #[test]
    fn r39_twelve_hour_date() {
        let r = parse_nv_tegra_release(R39).unwrap();
        assert_eq!(r.l4t, L4tVersion::new(39, 2, 1));
        assert_eq!(r.date.as_deref(), Some("Fri Aug  7 05:54:22 AM UTC 2026"));
    }

    #[test]
    fn crlf_bom_and_truncation() {
        let r = parse_nv_tegra_release("\u{feff}\n# R36 (release), REVISION: 5.0, GCID: 1\r\n")
            .unwrap();
        assert_eq!(r.l4t, L4tVersion::new(36, 5, 0));
        // Truncated after REVISION.
        let r = parse_nv_tegra_release("# R35 (release), REVISION: 4.1").unwrap();
        assert_eq!(r.l4t, L4tVersion::new(35, 4, 1));
        // Single-number revision.
        let r = parse_nv_tegra_release("# R21 (release), REVISION: 5").unwrap();
        assert_eq!(r.l4t, L4tVersion::new(21, 5, 0));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [
            "",
            "   \n\0\0",
            "hello",
            "# R",
            "# Rxx (release)",
            "# R35 (release",
            "# R35 (release), GCID: 1",
            "# R35 (release), REVISION: x.y",
            "# R35 (release), REVISION: 4.1.2.3x",
            "# R99999999999 (release), REVISION: 1.0",
            "\u{0}\u{1}\u{2}ÿþ",
        ] {
            assert!(parse_nv_tegra_release(bad).is_err(), "{bad:?}");
        }
        // Every prefix of a real file either parses or errors, never panics.
        for i in 0..R36.len() {
            if R36.is_char_boundary(i) {
                let _ = parse_nv_tegra_release(&R36[..i]);
            }
        }
    }
}
