//! `observe` over the real-file fixtures in `tests/fixtures/jetson-*/`
//! (sources in each fixture's SOURCE.md), plus garbage-input robustness.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpukb_jetson::{
    check_torch_wheel, observe, FactSource, JetsonClocksState, JetsonError, JetsonFiles,
    JetsonReport, L4tVersion, Soc, TorchBuild, TorchStatus,
};

/// Reads absolute paths under a fixture root.
struct DirFiles(PathBuf);

impl JetsonFiles for DirFiles {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let p = self.0.join(path.trim_start_matches('/'));
        match std::fs::read(&p) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if p.is_dir() => Err(format!("is a directory: {e}")),
            Err(e) => Err(e.to_string()),
        }
    }
    fn list(&self, dir: &str) -> Result<Option<Vec<String>>, String> {
        let p = self.0.join(dir.trim_start_matches('/'));
        match std::fs::read_dir(&p) {
            Ok(rd) => Ok(Some(
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect(),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

fn fixture(name: &str) -> JetsonReport {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name);
    assert!(root.is_dir(), "{} exists", root.display());
    observe(&DirFiles(root))
        .expect("observe succeeds")
        .expect("fixture is a Jetson")
}

fn val<T: Clone>(s: &Option<gpukb_jetson::Sourced<T>>) -> T {
    s.as_ref().expect("value present").value.clone()
}

#[test]
fn nano_jetpack_4_6_4() {
    let r = fixture("jetson-nano-jp464");
    let m = r.module.as_ref().unwrap();
    assert_eq!(m.part_number, "p3448-0000");
    assert_eq!(m.part_number_raw, "p3448-0000-b00");
    assert_eq!(m.family.as_deref(), Some("Nano"));
    assert_eq!(m.ram_gb, Some(4));
    assert_eq!(r.carrier.as_deref(), Some("p3449-0000-b00"));
    assert_eq!(val(&r.soc), Soc::Tegra210);
    assert_eq!(val(&r.compute_capability), "5.3");
    let l4t = r.l4t.as_ref().unwrap();
    assert_eq!(l4t.version, L4tVersion::new(32, 7, 4));
    assert_eq!(l4t.source, FactSource::ReleaseFile);
    let jp = r.jetpack.as_ref().unwrap();
    assert_eq!(jp.version, "4.6.4");
    assert_eq!(jp.source, FactSource::JetpackTable);
    // version.txt wins over dpkg; both say 10.2.
    assert_eq!(val(&r.cuda), "10.2.300");
    assert_eq!(r.cuda.as_ref().unwrap().source, FactSource::CudaVersionFile);
    assert_eq!(val(&r.cudnn), "8.2.1.32");
    assert_eq!(val(&r.tensorrt), "8.2.1");
    assert_eq!(r.cudnn.as_ref().unwrap().source, FactSource::DpkgPackage);
    assert_eq!(val(&r.ubuntu), "18.04");
    let pm = r.power_mode.as_ref().unwrap();
    assert_eq!((pm.id, pm.name.as_deref()), (Some(1), Some("5W")));
    assert_eq!(pm.source, FactSource::NvpmodelStatus);
    assert_eq!(pm.default_name.as_deref(), Some("MAXN"));
    let gpu = r.gpu.as_ref().unwrap();
    assert_eq!(gpu.freq_hz.max, Some(614_400_000));
    assert_eq!(gpu.load_path.as_deref(), Some("/sys/devices/gpu.0/load"));
    assert_eq!(r.clocks.state, JetsonClocksState::Inactive);
    assert_eq!(r.real_disagreements().count(), 0, "{:#?}", r.disagreements);
    assert!(
        r.disagreements.is_empty(),
        "t210ref on tegra210 is consistent"
    );
}

#[test]
fn xavier_nx_jetpack_5_1_5() {
    let r = fixture("jetson-xavier-nx-jp515");
    assert_eq!(r.module.as_ref().unwrap().part_number, "p3668-0000");
    assert_eq!(
        r.module.as_ref().unwrap().family.as_deref(),
        Some("Xavier NX")
    );
    assert_eq!(val(&r.soc), Soc::Tegra194);
    assert_eq!(val(&r.compute_capability), "7.2");
    assert_eq!(r.l4t.as_ref().unwrap().version, L4tVersion::new(35, 6, 1));
    assert_eq!(r.jetpack.as_ref().unwrap().version, "5.1.5");
    assert_eq!(val(&r.cuda), "11.4.298");
    assert_eq!(r.cuda.as_ref().unwrap().source, FactSource::DpkgPackage);
    assert_eq!(val(&r.cudnn), "8.6.0.166");
    assert_eq!(val(&r.tensorrt), "8.5.2");
    let pm = r.power_mode.as_ref().unwrap();
    assert_eq!(pm.name.as_deref(), Some("MODE_20W_6CORE"));
    assert_eq!(pm.default_name.as_deref(), Some("MODE_15W_6CORE"));
    // BOARD: t186ref on a tegra194 is expected: benign.
    assert_eq!(r.real_disagreements().count(), 0, "{:#?}", r.disagreements);
    assert!(r
        .disagreements
        .iter()
        .any(|d| d.fact == "board" && d.benign));
}

#[test]
fn orin_nano_jetpack_5_1_1() {
    let r = fixture("jetson-orin-nano-jp511");
    let m = r.module.as_ref().unwrap();
    assert_eq!(m.part_number, "p3767-0003");
    assert_eq!(m.name.as_deref(), Some("Jetson Orin Nano 8GB"));
    assert_eq!(m.ram_gb, Some(8));
    assert!(!m.super_variant);
    assert_eq!(val(&r.soc), Soc::Tegra234);
    assert_eq!(val(&r.compute_capability), "8.7");
    assert_eq!(r.l4t.as_ref().unwrap().version, L4tVersion::new(35, 3, 1));
    assert_eq!(r.jetpack.as_ref().unwrap().version, "5.1.1");
    // No CUDA packages in dpkg: components come from the table row.
    assert_eq!(val(&r.cuda), "11.4");
    assert_eq!(r.cuda.as_ref().unwrap().source, FactSource::JetpackTable);
    assert_eq!(val(&r.cudnn), "8.6.0");
    assert_eq!(val(&r.tensorrt), "8.5.2");
    let pm = r.power_mode.as_ref().unwrap();
    assert_eq!(pm.source, FactSource::NvpmodelConfDefault);
    assert_eq!(pm.name.as_deref(), Some("15W"));
    assert_eq!(
        r.gpu.as_ref().unwrap().devfreq_path,
        "/sys/class/devfreq/17000000.ga10b"
    );
    assert_eq!(r.real_disagreements().count(), 0, "{:#?}", r.disagreements);
}

#[test]
fn orin_nx_jetpack_6_2() {
    let r = fixture("jetson-orin-nx-jp62");
    let m = r.module.as_ref().unwrap();
    assert_eq!(m.part_number, "p3767-0001");
    assert_eq!(m.family.as_deref(), Some("Orin NX"));
    assert_eq!(m.ram_gb, Some(8));
    assert_eq!(val(&r.compute_capability), "8.7");
    let rel = r.release_file.as_ref().unwrap();
    assert_eq!(rel.kernel_variant.as_deref(), Some("oot"));
    assert_eq!(r.l4t.as_ref().unwrap().version, L4tVersion::new(36, 4, 3));
    assert_eq!(r.jetpack.as_ref().unwrap().version, "6.2");
    assert_eq!(val(&r.cuda), "12.6.68");
    assert_eq!(r.cuda.as_ref().unwrap().source, FactSource::CudaVersionFile);
    assert_eq!(val(&r.cudnn), "9.3.0.75");
    assert_eq!(val(&r.tensorrt), "10.3.0.30");
    let pm = r.power_mode.as_ref().unwrap();
    assert_eq!((pm.id, pm.name.as_deref()), (Some(2), Some("15W")));
    assert_eq!(pm.fan_mode.as_deref(), Some("quiet"));
    let gpu = r.gpu.as_ref().unwrap();
    assert_eq!(gpu.load_permille, Some(37));
    assert_eq!(r.clocks.state, JetsonClocksState::Inactive);
    assert_eq!(r.clocks.cpus_read, 6);
    assert!(r.disagreements.is_empty(), "{:#?}", r.disagreements);
}

#[test]
fn agx_orin_jetpack_7_2() {
    let r = fixture("jetson-agx-orin-jp72");
    let m = r.module.as_ref().unwrap();
    assert_eq!(m.part_number, "p3701-0000");
    assert_eq!(m.family.as_deref(), Some("AGX Orin"));
    assert_eq!(m.ram_gb, Some(32));
    assert_eq!(val(&r.compute_capability), "8.7");
    let rel = r.release_file.as_ref().unwrap();
    assert_eq!(rel.date.as_deref(), Some("Mon Jun  1 09:28:48 PM UTC 2026"));
    assert_eq!(r.l4t.as_ref().unwrap().version, L4tVersion::new(39, 2, 0));
    assert_eq!(r.jetpack.as_ref().unwrap().version, "7.2");
    assert_eq!(val(&r.cuda), "13.2.75");
    assert_eq!(val(&r.cudnn), "9.20.0.46");
    assert_eq!(val(&r.tensorrt), "10.16.2.10");
    assert_eq!(val(&r.ubuntu), "24.04");
    assert_eq!(r.power_mode.as_ref().unwrap().name.as_deref(), Some("MAXN"));
    assert_eq!(r.clocks.state, JetsonClocksState::Active);
    assert_eq!(r.clocks.cpus_pinned, 12);
    assert!(r.disagreements.is_empty(), "{:#?}", r.disagreements);
}

#[test]
fn l4t_newer_than_the_table() {
    let r = fixture("jetson-orin-nano-r39-2-1-newer");
    let m = r.module.as_ref().unwrap();
    assert_eq!(m.part_number, "p3767-0005");
    assert!(m.super_variant);
    assert_eq!(val(&r.compute_capability), "8.7");
    let l4t = r.l4t.as_ref().unwrap();
    assert_eq!(l4t.version, L4tVersion::new(39, 2, 1));
    assert!(!l4t.in_table);
    assert!(l4t.newer_than_table);
    let jp = r.jetpack.as_ref().unwrap();
    assert_eq!(jp.version, "7.x");
    assert_eq!(jp.major, Some(7));
    assert!(!jp.exact);
    assert_eq!(jp.source, FactSource::RMajorInference);
    assert_eq!(jp.nearest_known.as_deref(), Some("7.2 (R39.2.0)"));
    // Components from the nearest older row, labelled as such.
    assert_eq!(val(&r.cuda), "13.2.75");
    assert_eq!(
        r.cuda.as_ref().unwrap().source,
        FactSource::JetpackTableNearest
    );
    assert_eq!(val(&r.ubuntu), "24.04");
    let pm = r.power_mode.as_ref().unwrap();
    assert_eq!(pm.name.as_deref(), Some("MAXN_SUPER"));
    assert_eq!(pm.default_name.as_deref(), Some("25W"));
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("not in jetson/data/jetpack.csv")));
    assert_eq!(r.real_disagreements().count(), 0, "{:#?}", r.disagreements);
}

#[test]
fn contradicting_sources() {
    let r = fixture("jetson-agx-orin-contradict");
    assert_eq!(r.module.as_ref().unwrap().part_number, "p3701-0004");
    assert_eq!(r.module.as_ref().unwrap().ram_gb, Some(32));
    assert_eq!(val(&r.compute_capability), "8.7");
    // Release file wins for L4T; the dpkg core package disagrees.
    let l4t = r.l4t.as_ref().unwrap();
    assert_eq!(l4t.version, L4tVersion::new(35, 4, 1));
    assert_eq!(l4t.source, FactSource::ReleaseFile);
    assert_eq!(r.jetpack.as_ref().unwrap().version, "5.1.2");
    let d = r
        .disagreements
        .iter()
        .find(|d| d.fact == "l4t")
        .expect("l4t disagreement");
    assert!(!d.benign);
    assert_eq!(d.values[0].value, "35.4.1");
    assert_eq!(d.values[1].value, "35.3.1");
    assert!(d.explanation.contains("JetPack 5.1.2") && d.explanation.contains("JetPack 5.1.1"));
    let b = r
        .disagreements
        .iter()
        .find(|d| d.fact == "board")
        .expect("board disagreement");
    assert!(b.benign, "t186ref on Orin under JetPack 5 is expected");
    assert_eq!(val(&r.cuda), "11.4.298");
    assert_eq!(r.cuda.as_ref().unwrap().source, FactSource::JetpackTable);
}

#[test]
fn reports_serialize_and_round_trip() {
    for name in [
        "jetson-nano-jp464",
        "jetson-xavier-nx-jp515",
        "jetson-orin-nano-jp511",
        "jetson-orin-nx-jp62",
        "jetson-agx-orin-jp72",
        "jetson-orin-nano-r39-2-1-newer",
        "jetson-agx-orin-contradict",
    ] {
        let r = fixture(name);
        let j = serde_json::to_string(&r).unwrap();
        let back: JetsonReport = serde_json::from_str(&j).unwrap();
        assert_eq!(back, r, "{name}");
        // What .ci/aarch64.sh greps for must be in our own JSON too.
        let expect = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures")
                .join(name)
                .join("EXPECT"),
        )
        .unwrap();
        for line in expect
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains('='))
        {
            let (_, v) = line.split_once('=').unwrap();
            assert!(j.contains(&format!("\"{v}\"")), "{name}: {v} in {j}");
        }
        assert!(
            !name.is_empty() && fixture_has_source_md(name),
            "{name} SOURCE.md"
        );
    }
}

fn fixture_has_source_md(name: &str) -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
        .join("SOURCE.md")
        .is_file()
}

#[test]
fn torch_verdicts() {
    let nx = fixture("jetson-orin-nx-jp62");
    let v = check_torch_wheel("2.5.0a0+872d972e41.nv24.08", Some("12.6"), &nx);
    assert_eq!(
        (v.status, v.build),
        (TorchStatus::Ok, TorchBuild::NvidiaJetson)
    );
    let v = check_torch_wheel("2.5.1", None, &nx);
    assert_eq!(
        (v.status, v.build),
        (TorchStatus::Broken, TorchBuild::CpuOnly)
    );
    let v = check_torch_wheel("2.1.0a0+41361538.nv23.06", Some("11.4"), &nx);
    assert_eq!(v.status, TorchStatus::Broken, "{}", v.message);
    let v = check_torch_wheel("2.6.0+cu126", Some("12.6"), &nx);
    assert_eq!(
        (v.status, v.build),
        (TorchStatus::Warning, TorchBuild::GenericCuda)
    );
    let agx = fixture("jetson-agx-orin-jp72");
    let v = check_torch_wheel("2.10.0+cu130", Some("13.0"), &agx);
    assert_eq!(v.status, TorchStatus::Ok, "{}", v.message);
    let v = check_torch_wheel("2.10.0+cu132", Some("13.4"), &agx);
    assert_eq!(v.status, TorchStatus::Warning);
    let nano = fixture("jetson-nano-jp464");
    let v = check_torch_wheel("1.10.0", Some("10.2"), &nano);
    assert_eq!(
        (v.status, v.build),
        (TorchStatus::Ok, TorchBuild::OtherCuda)
    );
}

/// In-memory files for garbage-input tests.
struct MemFiles(BTreeMap<&'static str, Result<Vec<u8>, String>>);

impl JetsonFiles for MemFiles {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match self.0.get(path) {
            None => Ok(None),
            Some(Ok(b)) => Ok(Some(b.clone())),
            Some(Err(e)) => Err(e.clone()),
        }
    }
    fn list(&self, dir: &str) -> Result<Option<Vec<String>>, String> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let names: Vec<String> = self
            .0
            .keys()
            .filter_map(|k| k.strip_prefix(prefix.as_str()))
            .map(|rest| rest.split('/').next().unwrap_or("").to_string())
            .collect();
        Ok((!names.is_empty()).then_some(names))
    }
}

const PATHS: &[&str] = &[
    "/etc/nv_tegra_release",
    "/proc/device-tree/model",
    "/proc/device-tree/compatible",
    "/var/lib/dpkg/status",
    "/etc/nvpmodel.conf",
    "/var/lib/nvpmodel/status",
    "/etc/os-release",
    "/usr/local/cuda/version.json",
    "/usr/local/cuda-12.6/version.txt",
    "/sys/class/devfreq/17000000.gpu/max_freq",
    "/sys/class/devfreq/17000000.gpu/device/load",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq",
];

#[test]
fn not_a_jetson() {
    let files = MemFiles(BTreeMap::from([
        (
            "/etc/os-release",
            Ok(b"ID=ubuntu\nVERSION_ID=\"24.04\"\n".to_vec()),
        ),
        (
            "/proc/device-tree/compatible",
            Ok(b"raspberrypi,4-model-b\0brcm,bcm2711\0".to_vec()),
        ),
    ]));
    assert_eq!(observe(&files), Ok(None));
    assert_eq!(observe(&MemFiles(BTreeMap::new())), Ok(None));
}

#[test]
fn unreadable_identity_files_are_an_error() {
    let files = MemFiles(BTreeMap::from([
        (
            "/etc/nv_tegra_release",
            Err("permission denied".to_string()),
        ),
        (
            "/proc/device-tree/compatible",
            Err("permission denied".to_string()),
        ),
    ]));
    assert!(matches!(
        observe(&files),
        Err(JetsonError::Unreadable { .. })
    ));
    // One unreadable file among readable ones is a note, not an error.
    let files = MemFiles(BTreeMap::from([
        (
            "/etc/nv_tegra_release",
            Ok(b"# R36 (release), REVISION: 4.3, GCID: 1, BOARD: generic".to_vec()),
        ),
        ("/var/lib/dpkg/status", Err("EIO".to_string())),
    ]));
    let r = observe(&files).unwrap().unwrap();
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("/var/lib/dpkg/status: unreadable")));
    assert_eq!(r.jetpack.unwrap().version, "6.2");
}

#[test]
fn garbage_never_panics() {
    let garbage: Vec<Vec<u8>> = vec![
        Vec::new(),
        vec![0u8; 64],
        vec![0xff, 0xfe, 0x00, 0x9f, 0x80],
        (0u8..=255).collect(),
        b"# R36 (release), REVISION: 4.".to_vec(),
        b"# R".to_vec(),
        b"Package: nvidia-l4t-core\nVersion: \n\nPackage:\n".to_vec(),
        b"< POWER_MODEL ID=99999999999 NAME= >\n< PM_CONFIG DEFAULT=-1 >".to_vec(),
        b"{\"cuda\": {\"version\": 5}}".to_vec(),
        b"pmode:\nfmode:".to_vec(),
        "nvidia,p3767-0005-super+\0+\0nvidia,tegra234\0"
            .as_bytes()
            .to_vec(),
        "R35 \u{202e} REVISION: 1.1".as_bytes().to_vec(),
    ];
    for g in &garbage {
        // The same junk in every file at once.
        let files = MemFiles(PATHS.iter().map(|p| (*p, Ok(g.clone()))).collect());
        let r = observe(&files);
        // A truncated/garbage release file still counts as "a Jetson" (the file
        // exists) and is reported in notes.
        if let Ok(Some(rep)) = &r {
            let _ = serde_json::to_string(rep).unwrap();
        }
        // And each file alone.
        for p in PATHS {
            let files = MemFiles(BTreeMap::from([(*p, Ok(g.clone()))]));
            let _ = observe(&files);
        }
    }
}

/// kb-audit E12: from JetPack 5.0 CUDA can be upgraded without reflashing
/// (cuda-compat-X-Y); only JetPack 4 is fixed.
#[test]
fn cuda_12_wheel_on_jetpack_5_depends_on_the_compat_package() {
    let mut jp5 = fixture("jetson-orin-nano-jp511");
    assert!(jp5.cuda_compat.is_none());
    let v = check_torch_wheel("2.4.0+cu124", Some("12.4"), &jp5);
    assert_eq!(v.status, TorchStatus::Broken, "{}", v.message);
    assert!(
        v.message.contains("cuda-compat-12-4") && v.message.contains("without reflashing"),
        "says what to install: {}",
        v.message
    );
    jp5.cuda_compat = Some(gpukb_jetson::Sourced {
        value: "12.6.37".to_string(),
        source: FactSource::DpkgPackage,
        detail: "cuda-compat-12-6 12.6.37-1".into(),
    });
    let v = check_torch_wheel("2.4.0+cu124", Some("12.4"), &jp5);
    assert_eq!(v.status, TorchStatus::Ok, "{}", v.message);
    assert!(v.message.contains("cuda-compat-12-6"), "{}", v.message);
    // An older compat package than the wheel's CUDA: minor-version compatibility.
    let v = check_torch_wheel("2.7.0+cu128", Some("12.8"), &jp5);
    assert_eq!(v.status, TorchStatus::Warning, "{}", v.message);
    // CUDA 13 is JetPack 7's SBSA stack, not an upgrade of JetPack 5.
    let v = check_torch_wheel("2.11.0+cu130", Some("13.0"), &jp5);
    assert_eq!(v.status, TorchStatus::Broken, "{}", v.message);
    // JetPack 4 is fixed to its CUDA.
    let nano = fixture("jetson-nano-jp464");
    let v = check_torch_wheel("1.13.0+cu117", Some("11.7"), &nano);
    assert_eq!(v.status, TorchStatus::Broken, "{}", v.message);
    assert!(v.message.contains("JetPack 4"), "{}", v.message);
}

/// A fixture with extra dpkg stanzas appended to its status file.
struct WithPackages(DirFiles, &'static str);

impl JetsonFiles for WithPackages {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let base = self.0.read(path)?;
        if path != "/var/lib/dpkg/status" {
            return Ok(base);
        }
        let mut b = base.unwrap_or_default();
        b.extend_from_slice(self.1.as_bytes());
        Ok(Some(b))
    }
    fn list(&self, dir: &str) -> Result<Option<Vec<String>>, String> {
        self.0.list(dir)
    }
}

/// An upgraded CUDA 12.2 on JetPack 5 is a real disagreement without its
/// compat package and the supported upgrade path with it.
#[test]
fn upgraded_cuda_on_jetpack_5_is_benign_only_with_cuda_compat() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/jetson-orin-nano-jp511");
    let toolkit =
        "\nPackage: cuda-cudart-12-2\nStatus: install ok installed\nVersion: 12.2.140-1\n";
    let compat =
        "\nPackage: cuda-compat-12-2\nStatus: install ok installed\nVersion: 12.2.34086345-1\n";
    let cuda_disagreement = |r: &JetsonReport| {
        r.disagreements
            .iter()
            .find(|d| d.fact == "cuda")
            .map(|d| d.benign)
    };
    let without = observe(&WithPackages(DirFiles(root.clone()), toolkit))
        .unwrap()
        .unwrap();
    assert!(without.cuda_compat.is_none());
    assert_eq!(
        cuda_disagreement(&without),
        Some(false),
        "{:?}",
        without.disagreements
    );
    let both: &'static str = Box::leak(format!("{toolkit}{compat}").into_boxed_str());
    let with = observe(&WithPackages(DirFiles(root), both))
        .unwrap()
        .unwrap();
    assert_eq!(
        with.cuda_compat.as_ref().map(|c| c.value.as_str()),
        Some("12.2.34086345")
    );
    assert_eq!(
        cuda_disagreement(&with),
        Some(true),
        "{:?}",
        with.disagreements
    );
    let v = check_torch_wheel("2.3.0+cu121", Some("12.1"), &with);
    assert_ne!(v.status, TorchStatus::Broken, "{}", v.message);
}
