//! The CUDA binary-compatibility rules live in `gpukb_facts::compat` (one copy
//! for the probe, the doctor and the planner); re-exported for the probe.

pub use gpukb_facts::compat::*;
