//! Observes a machine's NVIDIA stack through one seam ([`host::Host`]: files
//! under a root, commands with timeouts, registered env vars, NVML and the
//! CUDA driver API) and produces a [`fingerprint::Fingerprint`] in which every
//! fact records where it came from.

pub mod elf;
pub mod fatbin;
pub mod host;
