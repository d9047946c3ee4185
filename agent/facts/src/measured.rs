//! What `gpukb probe` measured on the GPUs, as facts the diagnosis reads:
//! per device, whether the driver loaded every embedded image exactly as the
//! compatibility engine predicts, whether the kernels computed the right
//! answer, which framework libraries have a kernel image the device runs, and
//! which throughput figures fell far below their reference. The probe's full
//! report (with every figure) stays in the agent; this is its judged summary,
//! written by the agent at the seam.

use crate::fingerprint::Source;
use crate::version::ComputeCapability;
use serde::{Deserialize, Serialize};

/// The probe's evidence for one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeEvidence {
    /// Where it came from (`gpukb probe` live, or a capture's `probe.json`).
    pub source: Source,
    /// Each probed device, by CUDA ordinal.
    pub gpus: Vec<ProbedGpu>,
}

/// One probed device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbedGpu {
    /// The CUDA device ordinal the probe ran on.
    pub ordinal: usize,
    /// The device name from `cuDeviceGetName`.
    pub name: String,
    /// The compute capability the driver reports.
    pub cc: ComputeCapability,
    /// Images whose load result differed from the engine's prediction
    /// (`gpukb_probe.sm_90.cubin: 209, predicted 0`).
    pub load_mismatches: Vec<String>,
    /// Smoke tests that computed a wrong answer or failed to run.
    pub smoke_failures: Vec<String>,
    /// Frameworks judged on this device.
    pub frameworks: Vec<ProbedFramework>,
    /// Throughput figures far below their reference.
    pub slow: Vec<String>,
    /// Stages that failed (`cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY`).
    pub errors: Vec<String>,
}

/// A framework library judged on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbedFramework {
    /// The library, named for people (`torch 2.11.0+cu130 (libtorch_cuda.so)`).
    pub name: String,
    /// Where the library is.
    pub path: String,
    /// The CUresult loading it gives (0, 209, 222).
    pub expected_code: u32,
    /// Why, in the compatibility engine's words (which image the driver
    /// picks, or why none fits).
    pub reason: String,
}
