//! Pure parsers for the files and command outputs the agent reads. Each takes
//! bytes or text and never touches the machine; the readers in
//! [`crate::collect`] feed them through the host seam.

pub mod kernel_log;
pub mod ld_cache;
pub mod nvidia;
pub mod platform;
pub mod python;
pub mod system;
pub mod torch_init;
