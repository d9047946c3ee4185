//! L4T (Jetson Linux) release numbers: `R<major>.<minor>.<patch>`, and the
//! JetPack major that each R-major belongs to.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{clip, JetsonError};

/// An L4T release such as `35.4.1` (printed without the `R`; serialised as
/// the string `"35.4.1"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct L4tVersion {
    /// R-major: 32, 35, 36, 38, 39, ...
    pub major: u32,
    /// Minor (first number of `REVISION:`).
    pub minor: u32,
    /// Patch (second number of `REVISION:`; 0 when absent).
    pub patch: u32,
}

impl L4tVersion {
    /// Build a version from its three numbers.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Parse `35.4.1`, `R35.4.1`, `r36.4` (patch 0) or `32.7.1-20220219090432`
    /// (a dpkg version: the part after `-` is ignored).
    pub fn parse(text: &str) -> Result<Self, JetsonError> {
        let bad = || JetsonError::BadVersion {
            text: clip(text, 120),
        };
        let t = text.trim();
        let t = t
            .strip_prefix('R')
            .or_else(|| t.strip_prefix('r'))
            .unwrap_or(t);
        let t = t.split(['-', '+', '~', ' ']).next().unwrap_or("");
        let mut parts = t.split('.');
        let major = parse_num(parts.next()).ok_or_else(bad)?;
        let minor = parse_num(parts.next()).ok_or_else(bad)?;
        let patch = match parts.next() {
            None => 0,
            Some(p) => parse_num(Some(p)).ok_or_else(bad)?,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Self::new(major, minor, patch))
    }

    /// The JetPack major this R-major belongs to (R32→4, R34/R35→5, R36→6,
    /// R38+→7), with no table needed. `None` for releases older than R32 or
    /// unknown majors in between (R33, R37).
    pub fn jetpack_major(&self) -> Option<u32> {
        jetpack_major_for_r(self.major)
    }
}

/// R-major → JetPack major (R32→4, R34/R35→5, R36→6, R38 and later→7).
///
/// R38 and later is assumed to stay JetPack 7 until a newer mapping is known;
/// R31 was JetPack 4.1/4.1.1 (Xavier developer preview).
pub fn jetpack_major_for_r(r_major: u32) -> Option<u32> {
    match r_major {
        31 | 32 => Some(4),
        34 | 35 => Some(5),
        36 => Some(6),
        r if r >= 38 => Some(7),
        _ => None,
    }
}

fn parse_num(s: Option<&str>) -> Option<u32> {
    let s = s?.trim();
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Serialize for L4tVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for L4tVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "L4tVersion".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "description": "An L4T release, `36.4.3`" })
    }
}

impl<'de> Deserialize<'de> for L4tVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        L4tVersion::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for L4tVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// `major.minor` of a dotted version string (`12.6.68` → `(12, 6)`), used to
/// compare CUDA/cuDNN/TensorRT versions coming from different sources.
pub fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut it = version
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    let major = it.next()?.parse().ok()?;
    let minor = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

/// Compare two dotted versions numerically, component by component.
pub fn cmp_dotted(a: &str, b: &str) -> std::cmp::Ordering {
    let nums = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse::<u64>().unwrap_or(u64::MAX))
            .collect()
    };
    nums(a).cmp(&nums(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        assert_eq!(
            L4tVersion::parse("35.4.1").unwrap(),
            L4tVersion::new(35, 4, 1)
        );
        assert_eq!(
            L4tVersion::parse("R36.4").unwrap(),
            L4tVersion::new(36, 4, 0)
        );
        assert_eq!(
            L4tVersion::parse("32.7.1-20220219090432").unwrap(),
            L4tVersion::new(32, 7, 1)
        );
        assert!(L4tVersion::parse("").is_err());
        assert!(L4tVersion::parse("R").is_err());
        assert!(L4tVersion::parse("36").is_err());
        assert!(L4tVersion::parse("36.x").is_err());
        assert!(L4tVersion::parse("1.2.3.4").is_err());
        assert!(L4tVersion::parse("99999999999.1").is_err());
    }

    #[test]
    fn jetpack_majors() {
        assert_eq!(jetpack_major_for_r(32), Some(4));
        assert_eq!(jetpack_major_for_r(34), Some(5));
        assert_eq!(jetpack_major_for_r(35), Some(5));
        assert_eq!(jetpack_major_for_r(36), Some(6));
        assert_eq!(jetpack_major_for_r(38), Some(7));
        assert_eq!(jetpack_major_for_r(39), Some(7));
        assert_eq!(jetpack_major_for_r(37), None);
        assert_eq!(jetpack_major_for_r(28), None);
    }

    #[test]
    fn serde_as_string() {
        let v = L4tVersion::new(36, 4, 3);
        let j = serde_json::to_string(&v).unwrap();
        assert_eq!(j, "\"36.4.3\"");
        assert_eq!(serde_json::from_str::<L4tVersion>(&j).unwrap(), v);
        assert!(serde_json::from_str::<L4tVersion>("\"x\"").is_err());
    }

    #[test]
    fn dotted() {
        assert_eq!(major_minor("12.6.68"), Some((12, 6)));
        assert_eq!(major_minor("10.2"), Some((10, 2)));
        assert_eq!(major_minor("x"), None);
        assert!(cmp_dotted("12.10", "12.9").is_gt());
    }
}
