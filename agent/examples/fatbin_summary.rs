//! Prints the GPU code inside one ELF file (a `libtorch_cuda.so` unpacked
//! from a wheel) as JSON: `{"sass": [...], "ptx": [...], "images": N}`, read
//! with gpukb's own fatbin reader (the one `gpukb fingerprint` uses).
//! Used by `agent/facts/data/regen_torch_builds.py` to fill the torch build
//! table from the wheels themselves.
//!
//! `cargo run -p gpukb-agent --example fatbin_summary -- FILE`

#[allow(clippy::disallowed_methods)] // the file the user named
fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: fatbin_summary FILE");
        return std::process::ExitCode::from(2);
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "fatbin_summary: cannot open {}: {e}",
                path.to_string_lossy()
            );
            return std::process::ExitCode::from(2);
        }
    };
    // SAFETY: read-only map of a file nobody else writes while we read it.
    let map = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(m) => m,
        Err(e) => {
            eprintln!("fatbin_summary: cannot map {}: {e}", path.to_string_lossy());
            return std::process::ExitCode::from(2);
        }
    };
    match gpukb_agent::elf::parse_elf_file(&map, &file) {
        Ok(info) => {
            let f = info.fatbin.unwrap_or_default();
            println!(
                "{}",
                serde_json::json!({"sass": f.sass, "ptx": f.ptx, "images": f.images, "targets": f.targets})
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fatbin_summary: {}: {e}", path.to_string_lossy());
            std::process::ExitCode::from(2)
        }
    }
}
