//! The diagnosis over fingerprints: the H200's recorded fingerprint (schema 1)
//! is healthy; small, consistent edits produce the root cause they model.
//! Search confirming entries through the diagnosis is in
//! `kb/tests/search_with_diagnosis.rs`; recorded broken machines are in
//! `tests/tests/doctor.rs`.

use gpukb_doctor::{diagnose, CheckId, Layer, Severity, Status, Verdict};
use gpukb_facts::read::fingerprint_from_json;
use gpukb_facts::Fingerprint;
use serde_json::{json, Value};

const H200: &str = include_str!("../../../tests/fixtures/h200/fingerprint.json");

fn h200_json() -> Value {
    serde_json::from_str(H200).unwrap()
}

fn fp(v: &Value) -> Fingerprint {
    fingerprint_from_json(v.to_string().as_bytes()).unwrap()
}

#[test]
fn the_healthy_h200_is_ok_with_nothing_above_info() {
    let d = diagnose(&fp(&h200_json()), "test");
    assert_eq!(d.verdict, Verdict::Ok, "{:#?}", d.findings);
    assert!(
        d.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        d.findings
    );
    // The system cuDNN 9.14 nothing loads is context, and says which copy torch loads.
    let dup = d
        .findings
        .iter()
        .find(|f| f.check == CheckId::DuplicateLibraryVersions)
        .unwrap();
    assert!(dup.title.contains("torch loads 9.19.0"), "{}", dup.title);
    assert_eq!(d.exit_code(false), 0);
    let layer = |l: Layer| d.layers.iter().find(|x| x.layer == l).unwrap().status;
    assert_eq!(layer(Layer::CudaDriver), Status::Ok);
    assert_eq!(layer(Layer::KernelImage), Status::Ok);
    assert_eq!(layer(Layer::Jetson), Status::NotApplicable);
}

#[test]
fn schema_1_and_2_are_read_and_newer_schemas_are_refused() {
    let v = h200_json();
    assert_eq!(v["schema"], 1);
    let f = fp(&v);
    assert_eq!(f.schema, 2);
    let again = fingerprint_from_json(serde_json::to_string(&f).unwrap().as_bytes()).unwrap();
    assert_eq!(again, f);
    let mut newer = v.clone();
    newer["schema"] = json!(3);
    let e = fingerprint_from_json(newer.to_string().as_bytes()).unwrap_err();
    assert!(e.to_string().contains("newer"), "{e}");
    assert!(fingerprint_from_json(b"{\"x\":1}").is_err());
}

#[test]
fn cuda_visible_devices_is_the_root_cause_and_no_device_its_consequence() {
    let mut v = h200_json();
    v["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "CUDA_VISIBLE_DEVICES", "value": ""}));
    v["cuda"]["value"]["init"] = json!("CUDA_ERROR_NO_DEVICE");
    v["cuda"]["value"]["devices"] = json!([]);
    let d = diagnose(&fp(&v), "test");
    assert_eq!(d.verdict, Verdict::Failure);
    let first = &d.findings[0];
    assert_eq!(first.check, CheckId::CudaVisibleDevicesHidesGpus);
    assert!(first.root_cause);
    let init = d
        .findings
        .iter()
        .find(|f| f.check == CheckId::CudaInitFailed)
        .unwrap();
    assert!(!init.root_cause);
    assert_eq!(init.explained_by.as_deref(), Some(first.id.as_str()));
    // The fix names the GPUs this machine has.
    assert!(first.fixes.iter().any(|x| x.for_this_machine
        && x.commands
            .iter()
            .any(|c| c == "export CUDA_VISIBLE_DEVICES=0,1")));
}

#[test]
fn a_driver_too_old_gets_a_driver_branch_and_a_torch_build_computed_for_it() {
    let mut v = h200_json();
    v["nvml"]["value"]["cuda_driver_version"] = json!("12.8");
    v["nvml"]["value"]["driver_version"] = json!("570.124.06");
    v["cuda"]["value"]["driver_version"] = json!("12.8");
    v["driver"]["version"]["value"] = json!("570.124.06");
    // consistently: the user-space libraries are the same release
    for lib in ["libcuda", "libnvidia_ml"] {
        let l = &mut v["driver"][lib]["value"];
        l["version"] = json!("570.124.06");
        let real = l["real_path"]
            .as_str()
            .unwrap()
            .replace("580.159.04", "570.124.06");
        l["real_path"] = json!(real);
    }
    let d = diagnose(&fp(&v), "test");
    let f = &d.findings[0];
    assert_eq!(f.check, CheckId::DriverOlderThanTorchCuda);
    assert!(
        f.fixes[0]
            .commands
            .iter()
            .any(|c| c.contains("nvidia-driver-580")),
        "{:?}",
        f.fixes
    );
    // Or keep R570: the newest build that runs CUDA <= 12.8 and has sm_90.
    assert!(
        f.fixes
            .iter()
            .any(|x| x.commands.iter().any(|c| c.contains("whl/cu126"))),
        "{:?}",
        f.fixes
    );
}

#[test]
fn the_diagnosis_json_matches_its_schema() {
    let d = diagnose(&fp(&h200_json()), "test");
    let schema = gpukb_doctor::schema();
    let value = serde_json::to_value(&d).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // and a broken document does not
    let mut bad = value.clone();
    bad["verdict"] = json!("maybe");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn a_problem_confined_to_an_env_the_user_does_not_run_is_a_warning_naming_it() {
    let mut v = h200_json();
    let t = &mut v["python"][0]["torch"];
    t["version"] = json!("2.11.0+cpu");
    t["cuda"] = Value::Null;
    let env_path = v["python"][0]["site_packages"]
        .as_str()
        .unwrap()
        .to_string();
    // Active env elsewhere: the CPU build there is a warning, not the verdict.
    v["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "VIRTUAL_ENV", "value": "/home/u/other-venv"}));
    let d = diagnose(&fp(&v), "test");
    let f = d
        .findings
        .iter()
        .find(|f| f.check == CheckId::TorchCpuOnly)
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f
        .affects
        .iter()
        .any(|a| a.kind == gpukb_doctor::AffectsKind::PythonEnv && a.id == env_path));
    assert_eq!(d.verdict, Verdict::Warning);
    // The same env active: a failure.
    let envs = v["env"].as_array_mut().unwrap();
    envs.pop();
    envs.push(json!({"name": "VIRTUAL_ENV", "value": "/opt/torch/.venv"}));
    let d = diagnose(&fp(&v), "test");
    assert_eq!(d.verdict, Verdict::Failure);
}

#[test]
fn a_fault_on_one_gpu_of_several_names_that_gpu() {
    let mut v = h200_json();
    v["nvml"]["value"]["gpus"][1]["remapped_rows"]["failed"] = json!(true);
    let d = diagnose(&fp(&v), "test");
    let f = &d.findings[0];
    assert_eq!(f.id, "gpu_memory_fault:gpu1");
    assert!(f.affects[0].id.starts_with("1 (GPU-"), "{:?}", f.affects);
}

/// The H200 container with its libcuda/libnvidia-ml in the image's library
/// directory, the loaded module of another branch, and the mount table as read
/// (`mounts`: mount points of driver files). Whose files they are decides the
/// cause, not the branch.
fn container_with_module_of_another_branch(mounts: &[&str]) -> Fingerprint {
    let mut v = h200_json();
    for (lib, name) in [
        ("libcuda", "libcuda.so"),
        ("libnvidia_ml", "libnvidia-ml.so"),
    ] {
        let l = &mut v["driver"][lib]["value"];
        if l.is_object() {
            l["path"] = json!(format!("/usr/lib/x86_64-linux-gnu/{name}.1"));
            l["real_path"] = json!(format!("/usr/lib/x86_64-linux-gnu/{name}.580.159.04"));
        }
    }
    v["driver"]["version"]["value"] = json!("570.195.03");
    let rows: Vec<Value> = mounts
        .iter()
        .map(|m| json!({"mount_point": m, "root": m, "fs_type": "ext4"}))
        .collect();
    v["platform"] = json!({
        "wsl": {"status": "absent", "source": {"kind": "file", "path": "/proc/version"}, "note": "not WSL"},
        "driver_mounts": {"status": "found", "value": rows,
            "source": {"kind": "file", "path": "/proc/self/mountinfo"}},
    });
    fp(&v)
}

#[test]
fn driver_files_mounted_by_the_runtime_are_the_host_s_upgrade_not_the_image_s() {
    let root = |f: &Fingerprint| {
        let d = diagnose(f, "test");
        d.findings
            .iter()
            .find(|x| x.root_cause && x.severity == Severity::Failure)
            .map(|x| x.check)
    };
    let mounted = container_with_module_of_another_branch(&[
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04",
    ]);
    assert_eq!(root(&mounted), Some(CheckId::DriverUserspaceMismatch));
    let baked = container_with_module_of_another_branch(&["/dev/nvidia0"]);
    assert_eq!(root(&baked), Some(CheckId::ContainerShipsDriverLibraries));
}
