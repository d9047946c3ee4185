//! Every parser on arbitrary bytes (issue 12 §7): random buffers, and real
//! fixture files cut and bit-flipped, go through each pure parser; none may
//! panic. The work is bounded by a fixed number of cases and bytes (no clock);
//! the seed is printed and fixed (`GPUKB_FUZZ_SEED` replays another run).
#![allow(clippy::disallowed_methods)] // reads fixture files

use gpukb_agent::parse::{ld_cache, nvidia, python, system};
use gpukb_tests::{fixture, Rng};

/// Real inputs to mutate: one per parser family.
fn seeds() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for p in [
        "h200/root/etc/ld.so.cache",
        "h200/root/etc/os-release",
        "h200/root/proc/modules",
        "h200/root/proc/driver/nvidia/version",
        "jetson-orin-nx-jp62/etc/nv_tegra_release",
        "jetson-orin-nx-jp62/var/lib/dpkg/status",
        "jetson-orin-nx-jp62/etc/nvpmodel.conf",
        "jetson-orin-nx-jp62/proc/device-tree/compatible",
        "h200/capture.json",
    ] {
        v.push(std::fs::read(fixture(p)).unwrap_or_else(|e| panic!("{p}: {e}")));
    }
    v
}

fn all_parsers(b: &[u8]) {
    let t = String::from_utf8_lossy(b);
    let _ = ld_cache::parse_ld_cache(b);
    let _ = gpukb_agent::elf::parse_elf(b);
    let _ = gpukb_agent::fatbin::parse_fatbin_section(b);
    let _ = nvidia::parse_proc_driver_version(&t);
    let _ = nvidia::parse_module_version(&t);
    let _ = nvidia::parse_gpu_information(&t);
    let _ = nvidia::parse_smi_driver_version(&t);
    let _ = python::parse_torch_version_py(&t);
    let _ = python::parse_dist_metadata(&t);
    let _ = python::parse_pyvenv_cfg(&t);
    let _ = system::parse_os_release(&t);
    let _ = system::parse_proc_modules(&t);
    let _ = system::parse_modules_dep(&t);
    let _ = system::parse_sysfs_hex(&t);
    let _ = gpukb_jetson::parse_nv_tegra_release(&t);
    let _ = gpukb_jetson::dpkg::parse_dpkg_status(&t);
    let _ = gpukb_jetson::nvpmodel::parse_nvpmodel_conf(&t);
    let _ = gpukb_jetson::nvpmodel::parse_nvpmodel_status(&t);
    let _ = gpukb_jetson::devicetree::parse_model(b);
    let _ = gpukb_jetson::devicetree::parse_compatible(b);
    let _ = gpukb_jetson::cudafiles::parse_cuda_version_json(&t);
    let _ = gpukb_jetson::cudafiles::parse_cuda_version_txt(&t);
    let _ = gpukb_facts::read::fingerprint_from_json(b);
    let mut w = gpukb_kb::window::PasteWindow::new();
    w.push(b);
    let _ = w.finish();
}

#[test]
fn every_parser_survives_arbitrary_and_mutated_bytes() {
    let seed: u64 = std::env::var("GPUKB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7061_7273_6572_7331);
    println!("fuzz seed {seed}");
    let mut rng = Rng(seed);
    let seeds = seeds();
    const CASES: usize = 1500;
    for case in 0..CASES {
        let mut b: Vec<u8> = if case % 3 == 0 {
            (0..rng.below(4096)).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut s = seeds[rng.below(seeds.len())].clone();
            let cut = rng.below(s.len() + 1);
            s.truncate(cut.max(s.len() / 2));
            s
        };
        for _ in 0..rng.below(32) {
            if !b.is_empty() {
                let i = rng.below(b.len());
                b[i] = rng.next_u64() as u8;
            }
        }
        let r = std::panic::catch_unwind(|| all_parsers(&b));
        assert!(r.is_ok(), "a parser panicked on case {case} (seed {seed})");
    }
    // and the KB's analysis of a mutated paste
    let kb = gpukb_kb::Kb::open().unwrap();
    for _ in 0..100 {
        let b: Vec<u8> = (0..rng.below(2048)).map(|_| rng.next_u64() as u8).collect();
        let _ = kb.search(&String::from_utf8_lossy(&b), None, 3);
    }
}
