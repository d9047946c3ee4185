//! Links the `gpukb` binary as a position-dependent executable on x86-64 Linux when the
//! toolchain's default linker (`cc`) links it.
//!
//! A position-independent executable is relocated by the dynamic loader at every start:
//! about 28,600 relative relocations here, which read 690 KB of relocation records and
//! write 450 KB of pointers (every page of them a copy-on-write fault). `gpukb search` is a
//! short-lived process, so that was a third of its start-up: linked with `-no-pie` the
//! linker resolves those pointers once and a search starts about 0.6 ms sooner (120 fewer
//! page faults). `tests/bench/interleave.py` measures it next to `python3 -c pass`.
//!
//! Cross builds (cargo-zigbuild for aarch64 and the glibc-floor packages) name their own
//! linker (`RUSTC_LINKER`) and keep the default.

// Cargo hands a build script its inputs only as environment variables.
#![allow(clippy::disallowed_methods)]

fn main() {
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let default_linker = std::env::var_os("RUSTC_LINKER").is_none();
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && default_linker
    {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
