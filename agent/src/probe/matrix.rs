//! The module-load matrix: every image `gpukb-kernels` embeds, loaded on the
//! current device with `cuModuleLoadDataEx`, recorded as loaded or the exact
//! `CUresult`, beside what the [`super::verdict`] rules predicted.

use super::verdict::predict_standalone;
use super::{ffi, guard, ModuleLoad, ProbeError};
use crate::fatbin::{ArchVariant, FatbinImage, ImageKind};
use gpukb_kernels::{Image, ProbeImageKind, KERNELS};
use std::time::Instant;

/// The embedded image as a fatbin image, for the verdict rules.
pub(super) fn as_fatbin_image(img: &Image) -> FatbinImage {
    let (kind, version) = match (img.kind, img.ptx_isa) {
        (ProbeImageKind::Ptx, Some((a, b))) => (ImageKind::Ptx, (a as u16, b as u16)),
        (ProbeImageKind::Ptx, None) => (ImageKind::Ptx, (0, 0)),
        (ProbeImageKind::Cubin, _) => (ImageKind::Sass, (0, 0)),
    };
    FatbinImage {
        kind,
        arch: img.arch,
        variant: ArchVariant::Plain,
        version,
        compressed: false,
    }
}

/// The bytes `cuModuleLoadData` takes: a cubin as is, PTX with a trailing NUL.
pub(super) fn load_bytes(img: &Image) -> Vec<u8> {
    let mut v = img.bytes.to_vec();
    if img.kind == ProbeImageKind::Ptx {
        v.push(0);
    }
    v
}

/// Loads every embedded image on the current context's device.
pub(super) fn load_all(cc: (u32, u32), driver: u32) -> Result<Vec<ModuleLoad>, ProbeError> {
    let mut rows = Vec::new();
    for img in gpukb_kernels::images() {
        let fb = as_fatbin_image(img);
        let bytes = load_bytes(img);
        let t = Instant::now();
        let out = guard("cuModuleLoadDataEx", || ffi::module_load(&bytes))?;
        let ms = super::ms_since(t);
        let mut kernels_found = false;
        if let Some(m) = out.module {
            kernels_found = KERNELS
                .iter()
                .all(|k| guard("cuModuleGetFunction", || ffi::has_function(m, k)).unwrap_or(false));
            let _ = guard("cuModuleUnload", || ffi::unload(m));
        }
        let target = match img.kind {
            ProbeImageKind::Cubin => format!("sm_{}", img.arch),
            ProbeImageKind::Ptx => format!("compute_{}", img.arch),
        };
        rows.push(ModuleLoad {
            image: img.name.to_string(),
            target,
            kind: img.kind,
            arch: img.arch,
            ptx_isa: img.ptx_isa,
            code: out.code,
            code_name: if out.code == 0 {
                "CUDA_SUCCESS".into()
            } else {
                ffi::error_name(out.code)
            },
            code_message: (out.code != 0)
                .then(|| ffi::error_string(out.code))
                .flatten(),
            kernels_found,
            predicted: predict_standalone(cc, driver, &fb),
            ms,
            jit_log: out
                .jit_log
                .map(|l| l.lines().take(3).collect::<Vec<_>>().join(" | ")),
        });
    }
    Ok(rows)
}
