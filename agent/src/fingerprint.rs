//! The fingerprint schema lives in `gpukb-facts` (the fact model at the bottom
//! of the crate graph); re-exported here so collectors write `crate::fingerprint`.

pub use gpukb_facts::fingerprint::*;
