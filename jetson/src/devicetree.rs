//! Device-tree `model` and `compatible` (`/proc/device-tree/...`, the same as
//! `/sys/firmware/devicetree/base/...`): the SoC, the module part number, the
//! carrier board, and the `-super` flag of Orin Nano/NX on JetPack 6.2+.
//!
//! `compatible` is a list of NUL-separated strings, e.g. (Orin Nano devkit,
//! L4T 35.3.1) `nvidia,p3768-0000+p3767-0003`, `nvidia,p3768-0000+p3767-0005`,
//! `nvidia,p3767-0003`, `nvidia,p3767-0005`, `nvidia,tegra234`,
//! `nvidia,tegra23x`. The first `<carrier>+<module>[-suffix]` entry names the
//! board; `nvidia,tegraNNN` names the SoC. `model` is free-form marketing text
//! that NVIDIA does not treat as an ABI; it is shown, not trusted.

use serde::{Deserialize, Serialize};

/// Jetson SoCs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Soc {
    /// Tegra K1 (Jetson TK1).
    Tegra124,
    /// Tegra X1 (Jetson TX1, Nano): Maxwell.
    Tegra210,
    /// Tegra X2 / Parker (Jetson TX2 family): Pascal.
    Tegra186,
    /// Xavier (AGX Xavier, Xavier NX): Volta.
    Tegra194,
    /// Orin (AGX Orin, Orin NX, Orin Nano): Ampere.
    Tegra234,
    /// Thor (Jetson AGX Thor, T4000/T5000): Blackwell.
    Tegra264,
}

impl Soc {
    /// Recognise `tegra234`, `nvidia,tegra234`, `tegra23x`, ... .
    pub fn from_token(token: &str) -> Option<Self> {
        let t = token.trim().trim_start_matches("nvidia,");
        Some(match t {
            "tegra124" => Soc::Tegra124,
            "tegra210" => Soc::Tegra210,
            "tegra186" => Soc::Tegra186,
            "tegra194" => Soc::Tegra194,
            "tegra234" | "tegra23x" => Soc::Tegra234,
            "tegra264" | "tegra26x" => Soc::Tegra264,
            _ => return None,
        })
    }

    /// The canonical name (`tegra234`).
    pub fn name(&self) -> &'static str {
        match self {
            Soc::Tegra124 => "tegra124",
            Soc::Tegra210 => "tegra210",
            Soc::Tegra186 => "tegra186",
            Soc::Tegra194 => "tegra194",
            Soc::Tegra234 => "tegra234",
            Soc::Tegra264 => "tegra264",
        }
    }

    /// CUDA compute capability of the integrated GPU.
    ///
    /// Thor is 11.0 (`sm_110`) from CUDA 13.0 on; CUDA 12.8/12.9 called it
    /// 10.1 (`sm_101`) and CUDA 13 renamed it (NVIDIA cuRANDDx/nvCOMPDx
    /// release notes for CUDA 13.0: "Thor SM renaming from sm_101 to sm_110
    /// starting from CUDA 13.0; for CUDA 12.9 and older releases Thor stays
    /// labeled as sm_101", https://docs.nvidia.com/cuda/curanddx/release_notes.html;
    /// shared/research/compat-facts.md §1d/§3; jetson_stats `CUDA_TABLE`).
    pub fn compute_capability(&self) -> &'static str {
        match self {
            Soc::Tegra124 => "3.2",
            Soc::Tegra210 => "5.3",
            Soc::Tegra186 => "6.2",
            Soc::Tegra194 => "7.2",
            Soc::Tegra234 => "8.7",
            Soc::Tegra264 => "11.0",
        }
    }

    /// GPU architecture name.
    pub fn gpu_architecture(&self) -> &'static str {
        match self {
            Soc::Tegra124 => "Kepler",
            Soc::Tegra210 => "Maxwell",
            Soc::Tegra186 => "Pascal",
            Soc::Tegra194 => "Volta",
            Soc::Tegra234 => "Ampere",
            Soc::Tegra264 => "Blackwell",
        }
    }

    /// L4T R-majors that support this SoC (from NVIDIA's release notes as
    /// summarised in shared/research/compat-facts.md §4): TX1/Nano and TX2 end
    /// with R32, Xavier with R35, Orin runs R34–R36 and R39 (JetPack 7.2), Thor
    /// R38+.
    pub fn supported_by_r_major(&self, r_major: u32) -> bool {
        match self {
            Soc::Tegra124 => r_major <= 21,
            Soc::Tegra210 | Soc::Tegra186 => r_major <= 32,
            Soc::Tegra194 => (31..=35).contains(&r_major),
            Soc::Tegra234 => (34..=36).contains(&r_major) || r_major >= 39,
            Soc::Tegra264 => r_major >= 38,
        }
    }
}

/// What the `compatible` list says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Compatible {
    /// All entries, in order.
    pub entries: Vec<String>,
    /// SoC from the first `nvidia,tegraNNN` entry.
    pub soc: Option<Soc>,
    /// Module part number, normalised to `pNNNN-NNNN` (`p3767-0005`).
    pub module: Option<String>,
    /// Module part number as written, with any revision suffix (`p3448-0000-b00`).
    pub module_raw: Option<String>,
    /// Carrier board part number as written (`p3768-0000`, `p3449-0000-b00`).
    pub carrier: Option<String>,
    /// True when the board entry ends in `-super` (Orin Nano/NX "Super" mode
    /// configuration, JetPack 6.2+).
    pub super_variant: bool,
}

/// Split NUL-separated device-tree bytes into strings (lossy UTF-8, empty
/// entries dropped).
fn dt_strings(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parse `/proc/device-tree/model`: NUL-terminated text. `None` when empty.
pub fn parse_model(bytes: &[u8]) -> Option<String> {
    let first = dt_strings(bytes).into_iter().next()?;
    // A real model is printable text; reject binary garbage.
    if first.chars().any(|c| c.is_control()) || first.len() > 256 {
        return None;
    }
    Some(first)
}

/// Normalise `p3767-0005-super` / `p3448-0000-b00` / `P3767-0005` to
/// `p3767-0005`; `None` when it is not `pNNNN-NNNN...`.
pub fn normalize_part_number(raw: &str) -> Option<String> {
    let lower = raw.trim().to_ascii_lowercase();
    let mut it = lower.split('-');
    let board = it.next()?;
    let sku = it.next()?;
    let digits = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit());
    if board.len() == 5 && board.starts_with('p') && digits(&board[1..]) && digits(sku) {
        Some(format!("{board}-{sku}"))
    } else {
        None
    }
}

/// Parse `/proc/device-tree/compatible` (NUL-separated).
pub fn parse_compatible(bytes: &[u8]) -> Compatible {
    let entries = dt_strings(bytes);
    let soc = entries.iter().find_map(|e| Soc::from_token(e));
    let mut out = Compatible {
        soc,
        ..Compatible::default()
    };
    // 1. The first `<carrier>+<module>` entry.
    for e in &entries {
        let body = e.trim_start_matches("nvidia,");
        if let Some((carrier, module)) = body.split_once('+') {
            let mut module_raw = module.to_string();
            if let Some(m) = module_raw.strip_suffix("-super") {
                out.super_variant = true;
                module_raw = m.to_string();
            }
            if let Some(norm) = normalize_part_number(&module_raw) {
                out.module = Some(norm);
                out.module_raw = Some(module_raw);
                out.carrier = Some(carrier.to_string());
                break;
            }
        }
    }
    // 2. Else a module-only entry (`nvidia,p3767-0003`).
    if out.module.is_none() {
        for e in &entries {
            let body = e.trim_start_matches("nvidia,");
            if let Some(norm) = normalize_part_number(body) {
                out.module = Some(norm);
                out.module_raw = Some(body.to_string());
                break;
            }
        }
    }
    if entries.iter().any(|e| e.ends_with("-super")) {
        out.super_variant = true;
    }
    out.entries = entries;
    out
}

/// Which product family a `model` string names (`"NVIDIA Jetson Orin NX
/// Engineering Reference Developer Kit"` → `Orin NX`). Order matters: `Orin
/// Nano` before `Nano`, `TX2 NX` before `TX2`.
pub fn model_family(model: &str) -> Option<&'static str> {
    const PATTERNS: &[(&str, &str)] = &[
        ("thor", "AGX Thor"),
        ("igx orin", "IGX Orin"),
        ("agx orin", "AGX Orin"),
        ("orin nx", "Orin NX"),
        ("orin nano", "Orin Nano"),
        ("xavier nx", "Xavier NX"),
        ("agx xavier", "AGX Xavier"),
        ("tx2 nx", "TX2 NX"),
        ("tx2", "TX2"),
        ("tx1", "TX1"),
        ("jetson-nano", "Nano"),
        ("nano", "Nano"),
    ];
    let m = model.to_ascii_lowercase();
    PATTERNS
        .iter()
        .find(|(p, _)| m.contains(p))
        .map(|(_, fam)| *fam)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orin_nano_jp5() {
        // jetson_stats issue #400 (L4T 35.3.1), NULs restored.
        let c = parse_compatible(b"nvidia,p3768-0000+p3767-0003\0nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0003\0nvidia,p3767-0005\0nvidia,tegra234\0nvidia,tegra23x\0");
        assert_eq!(c.soc, Some(Soc::Tegra234));
        assert_eq!(c.module.as_deref(), Some("p3767-0003"));
        assert_eq!(c.carrier.as_deref(), Some("p3768-0000"));
        assert!(!c.super_variant);
        assert_eq!(c.entries.len(), 6);
    }

    #[test]
    fn orin_nano_super() {
        // ARK-Electronics/ark_jetson_kernel#60.
        let c = parse_compatible(
            b"nvidia,p3768-0000+p3767-0005-super\0nvidia,p3767-0005\0nvidia,tegra234\0",
        );
        assert_eq!(c.module.as_deref(), Some("p3767-0005"));
        assert!(c.super_variant);
    }

    #[test]
    fn nano_b01_and_thor() {
        let c = parse_compatible(
            b"nvidia,p3449-0000-b00+p3448-0000-b00\0nvidia,jetson-nano\0nvidia,tegra210\0",
        );
        assert_eq!(c.soc, Some(Soc::Tegra210));
        assert_eq!(c.module.as_deref(), Some("p3448-0000"));
        assert_eq!(c.module_raw.as_deref(), Some("p3448-0000-b00"));
        assert_eq!(c.carrier.as_deref(), Some("p3449-0000-b00"));
        let t = parse_compatible(b"nvidia,tegra264\0");
        assert_eq!(t.soc.map(|s| s.compute_capability()), Some("11.0"));
        assert_eq!(t.module, None);
    }

    #[test]
    fn model_and_garbage() {
        assert_eq!(
            parse_model(b"NVIDIA Jetson Nano Developer Kit\0").as_deref(),
            Some("NVIDIA Jetson Nano Developer Kit")
        );
        assert_eq!(parse_model(b""), None);
        assert_eq!(parse_model(b"\0\0"), None);
        assert_eq!(parse_model(&[0x01, 0x02, 0xff, 0x00]), None);
        let c = parse_compatible(&[0xff, 0xfe, 0, 0x2b, 0x2b, 0]);
        assert_eq!(c.soc, None);
        assert_eq!(c.module, None);
        assert_eq!(parse_compatible(b""), Compatible::default());
    }

    #[test]
    fn families() {
        assert_eq!(
            model_family("NVIDIA Jetson Orin Nano Developer Kit"),
            Some("Orin Nano")
        );
        assert_eq!(
            model_family("NVIDIA Jetson Nano Developer Kit"),
            Some("Nano")
        );
        assert_eq!(model_family("Jetson AGX Orin"), Some("AGX Orin"));
        assert_eq!(
            model_family("NVIDIA Jetson Orin NX Engineering Reference Developer Kit"),
            Some("Orin NX")
        );
        assert_eq!(model_family("Raspberry Pi 4"), None);
    }

    #[test]
    fn soc_support() {
        assert!(Soc::Tegra210.supported_by_r_major(32));
        assert!(!Soc::Tegra210.supported_by_r_major(35));
        assert!(Soc::Tegra234.supported_by_r_major(39));
        assert!(!Soc::Tegra234.supported_by_r_major(38));
        assert!(Soc::Tegra264.supported_by_r_major(38));
    }
}
