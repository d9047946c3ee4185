//! GPU code targets: the SASS (cubin) and PTX images a fatbin holds, as
//! typed values (`sm_90a` = SASS, arch 90, arch-specific variant), and the
//! summary the fingerprint stores. The fatbin reader lives in the agent;
//! these are the types it produces and the compatibility engine reads.

use crate::schema_doc::UNPUBLISHED;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What an image in a fatbin holds.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ImageKind {
    /// Machine code (a cubin) for one SM architecture.
    Sass,
    /// PTX the driver can JIT-compile.
    Ptx,
    /// Something else (NVVM IR, unknown kinds).
    Other(u16),
}

/// Plain, arch-specific (`sm_90a`) or family-specific (`sm_100f`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema_doc::unit_variants_as_enum)]
pub enum ArchVariant {
    /// `sm_90`: runs on its own and (SASS) later minors of the major, or (PTX)
    /// any later GPU.
    #[schemars(description = UNPUBLISHED)]
    Plain,
    /// `sm_90a`: uses arch-specific features; runs only on that exact CC.
    #[schemars(description = UNPUBLISHED)]
    A,
    /// `sm_100f`: family-specific; runs on the CCs of its family.
    #[schemars(description = UNPUBLISHED)]
    F,
}

/// One image header from a fatbin.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub struct FatbinImage {
    /// SASS, PTX or something else.
    #[schemars(description = UNPUBLISHED)]
    pub kind: ImageKind,
    /// SM number: 90 for sm_90, 100 for sm_100.
    pub arch: u32,
    /// Plain, arch-specific (`a`) or family-specific (`f`).
    #[schemars(description = UNPUBLISHED)]
    pub variant: ArchVariant,
    /// PTX ISA version for PTX, cubin ABI version for SASS.
    pub version: (u16, u16),
    /// Whether the image is stored compressed in the fatbin.
    #[schemars(description = UNPUBLISHED)]
    pub compressed: bool,
}

impl FatbinImage {
    /// `sm_90a`, `compute_80`, as cuobjdump names them.
    pub fn target(&self) -> String {
        let suffix = match self.variant {
            ArchVariant::Plain => "",
            ArchVariant::A => "a",
            ArchVariant::F => "f",
        };
        match self.kind {
            ImageKind::Sass => format!("sm_{}{suffix}", self.arch),
            ImageKind::Ptx => format!("compute_{}{suffix}", self.arch),
            ImageKind::Other(k) => format!("kind{k}_{}{suffix}", self.arch),
        }
    }
}

/// One distinct target in a fatbin and how many images carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FatbinTarget {
    /// The images' common header (kind, arch, variant, version); `compressed`
    /// is always false here.
    #[serde(flatten)]
    #[schemars(description = UNPUBLISHED)]
    pub image: FatbinImage,
    /// How many images in the file carry this target.
    #[schemars(description = UNPUBLISHED)]
    pub count: u32,
}

/// The GPU code inside one ELF file, summarised.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FatbinSummary {
    /// SASS targets, e.g. `sm_80`, `sm_90a`, sorted by arch.
    pub sass: Vec<String>,
    /// PTX targets, e.g. `compute_80`.
    pub ptx: Vec<String>,
    /// Distinct (kind, arch, variant, version) with counts.
    pub targets: Vec<FatbinTarget>,
    /// Number of images.
    pub images: u32,
}

/// Summarises images the way users read them.
pub fn summarize(images: &[FatbinImage]) -> FatbinSummary {
    let mut counts: BTreeMap<FatbinImage, u32> = BTreeMap::new();
    for i in images {
        let mut key = *i;
        key.compressed = false;
        *counts.entry(key).or_default() += 1;
    }
    let mut sass: Vec<(u32, ArchVariant, String)> = Vec::new();
    let mut ptx: Vec<(u32, ArchVariant, String)> = Vec::new();
    for k in counts.keys() {
        let t = (k.arch, k.variant, k.target());
        match k.kind {
            ImageKind::Sass => sass.push(t),
            ImageKind::Ptx => ptx.push(t),
            ImageKind::Other(_) => {}
        }
    }
    sass.sort();
    sass.dedup();
    ptx.sort();
    ptx.dedup();
    FatbinSummary {
        sass: sass.into_iter().map(|t| t.2).collect(),
        ptx: ptx.into_iter().map(|t| t.2).collect(),
        targets: counts
            .into_iter()
            .map(|(image, count)| FatbinTarget { image, count })
            .collect(),
        images: images.len() as u32,
    }
}
