//! Typed versions: [`ComputeCapability`] (`9.0`), [`CudaVersion`] (`13.0`,
//! the toolkit or driver API version) and [`DriverVersion`] (`580.159.04`,
//! the kernel driver release). Parsed once at the seam, compared as numbers
//! (never as strings: `sm_100 > sm_90`, `12.10 > 12.9`), serialised as the
//! strings NVIDIA prints.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A value that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {text:?} is not valid (expected {expected})")]
pub struct ParseVersionError {
    what: &'static str,
    text: String,
    expected: &'static str,
}

fn err(what: &'static str, text: &str, expected: &'static str) -> ParseVersionError {
    ParseVersionError {
        what,
        text: text.chars().take(40).collect(),
        expected,
    }
}

fn two_numbers(s: &str) -> Option<(u32, u32)> {
    let s = s.trim();
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    // CUDA versions may carry a patch level ("12.4.1"): keep major.minor.
    let b = b.split('.').next().unwrap_or("0");
    Some((a.parse().ok()?, b.parse().ok()?))
}

macro_rules! string_serde {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string" })
            }
        }
    };
}

/// A GPU's compute capability, e.g. 8.9 (RTX 4090), 9.0 (H100/H200), 12.0 (RTX 5090).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    /// The major number: the architecture generation (9 for Hopper).
    pub major: u32,
    /// The minor number: the variant within it (0 to 9).
    pub minor: u32,
}

impl ComputeCapability {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }
    /// From an SM number: 90 → 9.0, 100 → 10.0, 121 → 12.1.
    pub const fn from_sm(sm: u32) -> Self {
        ComputeCapability::new(sm / 10, sm % 10)
    }
    /// The SM number: 9.0 → 90.
    pub const fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }
    /// As a `(major, minor)` pair.
    pub const fn pair(self) -> (u32, u32) {
        (self.major, self.minor)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for ComputeCapability {
    type Err = ParseVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().trim_start_matches("sm_");
        if !t.contains('.') && t.len() >= 2 && t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse()
                .map(Self::from_sm)
                .map_err(|_| err("compute capability", s, "like 9.0"));
        }
        match two_numbers(t) {
            Some((a, b)) if (1..=30).contains(&a) && b < 10 => Ok(Self::new(a, b)),
            _ => Err(err("compute capability", s, "like 9.0")),
        }
    }
}
string_serde!(ComputeCapability);

/// A CUDA version: a toolkit's (`nvcc`, `libcudart`), a framework's build, or
/// the highest one a driver supports (`cuDriverGetVersion`). Which one it is
/// is said by the field that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    /// The major release (13 of 13.0).
    pub major: u32,
    /// The minor release (8 of 12.8).
    pub minor: u32,
}

impl CudaVersion {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        CudaVersion { major, minor }
    }
    /// From the integer `cuDriverGetVersion` returns: 13000 → 13.0, 12080 → 12.8.
    pub const fn from_api(v: u32) -> Self {
        CudaVersion::new(v / 1000, (v % 1000) / 10)
    }
    /// As the API integer: 13.0 → 13000.
    pub const fn api(self) -> u32 {
        self.major * 1000 + self.minor * 10
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for CudaVersion {
    type Err = ParseVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match two_numbers(s) {
            Some((a, b)) if (1..=99).contains(&a) && b < 100 => Ok(Self::new(a, b)),
            _ => Err(err("CUDA version", s, "like 13.0")),
        }
    }
}
string_serde!(CudaVersion);

/// A kernel driver release, e.g. 580.159.04 (branch R580). Ordered by its
/// numbers; the text is kept as NVIDIA writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DriverVersion {
    parts: Vec<u32>,
    text: String,
}

impl DriverVersion {
    /// The branch: 580 for 580.159.04.
    pub fn branch(&self) -> u32 {
        self.parts[0]
    }
    /// The numbers: [580, 159, 4].
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }
    /// The release as NVIDIA writes it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for DriverVersion {
    type Err = ParseVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let parts: Option<Vec<u32>> = t.split('.').map(|p| p.parse().ok()).collect();
        match parts {
            Some(p) if !p.is_empty() && p.len() <= 4 && (100..=9999).contains(&p[0]) => {
                Ok(DriverVersion {
                    parts: p,
                    text: t.to_string(),
                })
            }
            _ => Err(err("driver version", s, "like 580.159.04")),
        }
    }
}
string_serde!(DriverVersion);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_capability_parses_and_orders_numerically() {
        let a: ComputeCapability = "9.0".parse().unwrap();
        let b: ComputeCapability = "10.0".parse().unwrap();
        assert!(a < b, "10.0 must sort after 9.0");
        assert_eq!(
            "sm_121".parse::<ComputeCapability>().unwrap(),
            ComputeCapability::new(12, 1)
        );
        assert_eq!(ComputeCapability::from_sm(89).to_string(), "8.9");
        assert!("nine".parse::<ComputeCapability>().is_err());
        assert!("9.15".parse::<ComputeCapability>().is_err());
    }

    #[test]
    fn cuda_versions_compare_as_numbers() {
        let a: CudaVersion = "12.9".parse().unwrap();
        let b: CudaVersion = "12.10".parse().unwrap();
        assert!(a < b);
        assert_eq!(CudaVersion::from_api(12080).to_string(), "12.8");
        assert_eq!(
            "12.4.1".parse::<CudaVersion>().unwrap(),
            CudaVersion::new(12, 4)
        );
        assert_eq!(CudaVersion::new(13, 0).api(), 13000);
    }

    #[test]
    fn driver_versions_keep_their_text_and_compare_by_numbers() {
        let a: DriverVersion = "580.95.05".parse().unwrap();
        let b: DriverVersion = "580.159.04".parse().unwrap();
        assert!(a < b, "159 > 95 numerically");
        assert_eq!(b.to_string(), "580.159.04");
        assert_eq!(b.branch(), 580);
        assert!("abc".parse::<DriverVersion>().is_err());
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(json, "\"580.159.04\"");
        let back: DriverVersion = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
    }
}
