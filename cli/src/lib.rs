//! The `gpukb` command line: the only crate that prints or picks exit codes.
