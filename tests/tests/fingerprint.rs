//! The whole fingerprint over recorded machines: a machine without any
//! NVIDIA driver, garbage files, a hung nvidia-smi, and capture/replay round
//! trips.
#![allow(clippy::disallowed_methods)] // tests build and read fixture trees

use gpukb_agent::fingerprint::Observed;
use gpukb_agent::host::{Host, LiveOptions};
use gpukb_agent::{fingerprint, Fingerprint, Settings};
use gpukb_tests::fixture;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The fingerprint recorded at capture time (schema 1, upgraded on reading).
fn recorded(name: &str) -> Fingerprint {
    let bytes = std::fs::read(fixture(name).join("fingerprint.json")).unwrap();
    gpukb_facts::read::fingerprint_from_json(&bytes).unwrap()
}

fn replay(name: &str) -> Fingerprint {
    fingerprint(
        Arc::new(Host::replay(fixture(name)).unwrap()),
        &Settings::default(),
    )
}

#[test]
fn replaying_a_capture_reproduces_the_fingerprint_it_recorded() {
    for name in ["no-driver", "h200"] {
        assert!(fixture(name).exists(), "fixture {name} is missing");
        let mut recorded = recorded(name);
        let replayed = replay(name);
        // Facts the format-1 captures never asked for are unobservable on replay,
        // never absent or failed.
        assert!(
            matches!(replayed.pci, Observed::Unobservable { .. }),
            "{:?}",
            replayed.pci
        );
        assert!(matches!(
            replayed.driver.installed_modules,
            Observed::Unobservable { .. }
        ));
        recorded.pci = replayed.pci.clone();
        recorded.driver.installed_modules = replayed.driver.installed_modules.clone();
        // The kernel log and the platform facts (WSL2 files, driver mounts) are newer than
        // these captures: unobservable on replay, never absent or failed.
        assert!(matches!(replayed.kernel_log, Observed::Unobservable { .. }));
        assert!(matches!(
            replayed.platform.driver_mounts,
            Observed::Unobservable { .. }
        ));
        recorded.kernel_log = replayed.kernel_log.clone();
        recorded.platform = replayed.platform.clone();
        // Which libcuda gpukb mapped and cuInit in the process's copy are newer than
        // these captures: unobservable on replay.
        if let (Some(rc), Some(pc)) = (recorded.cuda.value_mut(), replayed.cuda.value()) {
            assert!(matches!(pc.loaded, Observed::Unobservable { .. }));
            assert!(!matches!(pc.process, Observed::Found { .. }));
            rc.loaded = pc.loaded.clone();
            rc.process = pc.process.clone();
        }
        // Toolkits also record the names they were reached by (CUDA_HOME, /usr/local/cuda).
        for (r, p) in recorded
            .libraries
            .toolkits
            .iter_mut()
            .zip(&replayed.libraries.toolkits)
        {
            r.reached_as = p.reached_as.clone();
        }
        // Framework builds (JAX plugin, CuPy…) are read from listings the capture
        // recorded, by a reader newer than the recorded fingerprint.
        // So are torch's loads: the loader model (agent/src/loader) resolves every
        // CUDA library the process loads, with its rule, where the recorded
        // fingerprint resolved only libtorch_cuda.so's NEEDED entries.
        for (r, p) in recorded.python.iter_mut().zip(&replayed.python) {
            r.frameworks = p.frameworks.clone();
            if let (Some(rt), Some(pt)) = (r.torch.as_mut(), p.torch.as_ref()) {
                rt.loads = pt.loads.clone();
            }
        }
        assert_eq!(
            replayed, recorded,
            "replay of {name} differs from its live fingerprint"
        );
    }
}

#[test]
fn a_machine_without_a_driver_says_so() {
    let fp = replay("no-driver");
    assert!(
        matches!(fp.driver.version, Observed::Absent { .. }),
        "{:?}",
        fp.driver.version
    );
    assert!(matches!(fp.nvml, Observed::Absent { .. }), "{:?}", fp.nvml);
    assert!(matches!(fp.cuda, Observed::Absent { .. }), "{:?}", fp.cuda);
    assert!(fp.libraries.files.is_empty());
    let line = gpukb_cli::report::headline(&fp);
    assert!(line.starts_with("No NVIDIA driver"), "{line}");
}

#[test]
fn capture_then_replay_round_trips_on_this_machine() {
    let host = Arc::new(Host::live(LiveOptions::default()).recording());
    let live = fingerprint(host.clone(), &Settings::default());
    let dir = tempfile::tempdir().unwrap();
    host.write_capture(dir.path()).unwrap();
    let replayed = fingerprint(
        Arc::new(Host::replay(dir.path()).unwrap()),
        &Settings::default(),
    );
    assert_eq!(live, replayed);
}

fn write(root: &std::path::Path, path: &str, bytes: &[u8]) {
    let p = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn garbage_files_are_reported_not_panicked_on() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let junk: Vec<u8> = (0..50_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    write(r, "/proc/driver/nvidia/version", &junk);
    write(r, "/sys/module/nvidia/version", b"\xff\xfe not a version");
    write(r, "/etc/ld.so.cache", &junk);
    write(r, "/etc/os-release", &junk);
    write(r, "/proc/modules", &junk);
    write(r, "/usr/local/cuda-12.4/version.json", b"{\"cuda\": [");
    let site = "/usr/local/lib/python3.11/dist-packages";
    write(
        r,
        &format!("{site}/torch/version.py"),
        b"__version__ = '2.1.0+cu121'\ncuda = '12.1'\n",
    );
    write(r, &format!("{site}/torch/lib/libtorch_cuda.so"), &junk);
    write(r, &format!("{site}/torch-2.1.0.dist-info/METADATA"), &junk);
    // A directory where a file is expected: unreadable.
    std::fs::create_dir_all(r.join("proc/sys/kernel/osrelease")).unwrap();
    let fp = fingerprint(Arc::new(Host::root_dir(r)), &Settings::default());
    assert!(
        matches!(fp.driver.version, Observed::Failed { .. }),
        "{:?}",
        fp.driver.version
    );
    assert!(
        matches!(fp.host.kernel, Observed::Failed { .. }),
        "{:?}",
        fp.host.kernel
    );
    assert!(
        matches!(fp.host.arch, Observed::Failed { .. }),
        "{:?}",
        fp.host.arch
    );
    let torch = fp
        .python
        .iter()
        .find_map(|e| e.torch.as_ref())
        .expect("torch found");
    assert_eq!(torch.version, "2.1.0+cu121");
    assert!(
        matches!(torch.kernels, Observed::Failed { .. }),
        "{:?}",
        torch.kernels
    );
    assert!(fp
        .libraries
        .toolkits
        .iter()
        .any(|t| matches!(t.version, Observed::Failed { .. })));
}

#[test]
fn a_hung_nvidia_smi_is_reported_as_a_timeout() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    std::fs::write(&smi, "#!/bin/sh\nsleep 60\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = t.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let host = Host::live(LiveOptions {
        root,
        command_timeout: Duration::from_millis(500),
        env: Some(BTreeMap::from([(
            "PATH".to_string(),
            bin.display().to_string(),
        )])),
        elf_cache: None,
    });
    let start = Instant::now();
    let fp = fingerprint(Arc::new(host), &Settings::default());
    let took = start.elapsed();
    if fp.nvml.is_found() {
        return; // a real driver answered before the fallback was needed
    }
    match &fp.driver.version {
        Observed::Failed { error, .. } => {
            assert!(error.contains("did not answer within"), "{error}")
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_corrupt_capture_is_a_clean_error() {
    let t = tempfile::tempdir().unwrap();
    assert!(Host::replay(t.path()).is_err());
    std::fs::write(
        t.path().join("capture.json"),
        b"{\"format\": 1, \"files\": 7}",
    )
    .unwrap();
    let e = Host::replay(t.path()).unwrap_err().to_string();
    assert!(e.contains("capture.json"), "{e}");
}
