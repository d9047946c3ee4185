//! The CUDA builds of frameworks other than torch (JAX's CUDA plugin, CuPy,
//! TensorFlow, ONNX Runtime's CUDA provider) over recorded machines: what the
//! fingerprint reads, what the doctor concludes, the fixes it computes for
//! that machine, and the healthy H200 control staying `ok`.
#![allow(clippy::disallowed_methods)] // tests read fixture trees

use gpukb_agent::fingerprint::{FrameworkBuild, Observed};
use gpukb_agent::host::Host;
use gpukb_agent::{fingerprint, Fingerprint, Settings};
use gpukb_doctor::{CheckId, Diagnosis, Finding, Layer, Severity, Status, Verdict};
use gpukb_tests::fixture;
use std::sync::Arc;

fn replay(name: &str) -> Fingerprint {
    fingerprint(
        Arc::new(Host::replay(fixture(name)).unwrap()),
        &Settings::default(),
    )
}

fn doctor(name: &str) -> (Fingerprint, Diagnosis) {
    let fp = replay(name);
    let kb = gpukb_kb::Kb::open().unwrap();
    let mut d = gpukb_doctor::diagnose(&fp, name);
    kb.link_entries(&fp, &mut d);
    (fp, d)
}

fn frameworks(fp: &Fingerprint) -> Vec<&FrameworkBuild> {
    fp.python.iter().flat_map(|e| &e.frameworks).collect()
}

fn root(d: &Diagnosis) -> &Finding {
    let f = &d.findings[0];
    assert!(f.root_cause, "{f:?}");
    f
}

fn text(d: &Diagnosis) -> String {
    let mut out = Vec::new();
    gpukb_cli::doctor::render(d, &gpukb_cli::style::Style::plain(), false, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn commands(f: &Finding) -> Vec<&str> {
    f.fixes
        .iter()
        .flat_map(|s| s.commands.iter().map(String::as_str))
        .collect()
}

#[test]
fn the_h200_capture_reads_its_jax_plugin_and_cupy_builds() {
    let fp = replay("h200");
    let fw = frameworks(&fp);
    let jax = fw
        .iter()
        .find(|f| f.distribution == "jax-cuda13-plugin")
        .expect("the capture lists jax_cuda13_plugin-0.11.2.dist-info");
    assert_eq!(jax.framework, "jax");
    assert_eq!(jax.version, "0.11.2");
    let cuda = jax.cuda.value().unwrap();
    assert_eq!((cuda.major, cuda.minor), (13, None));
    assert_eq!(cuda.read_from, "distribution name jax-cuda13-plugin");
    let names: Vec<(&str, &str)> = jax
        .same_release
        .iter()
        .map(|p| (p.name.as_str(), p.version.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("jaxlib", "0.11.2"),
            ("jax-cuda13-plugin", "0.11.2"),
            ("jax-cuda13-pjrt", "0.11.2")
        ]
    );
    let cupy = fw.iter().find(|f| f.framework == "cupy").unwrap();
    assert_eq!(cupy.distribution, "cupy-cuda13x");
    assert_eq!(cupy.cuda.value().map(|c| c.major), Some(13));
    // onnxruntime 1.30.0 there is the CPU package: nothing to judge.
    assert!(!fw.iter().any(|f| f.framework == "onnxruntime-gpu"));
}

#[test]
fn every_healthy_h200_stays_ok_with_its_frameworks_shown() {
    for name in [
        "h200",
        "healthy/h200-with-pci",
        "healthy/h200-live-2026-12-01",
        "healthy/h200-frameworks",
    ] {
        let (_, d) = doctor(name);
        assert_eq!(d.verdict, Verdict::Ok, "{name}: {}", text(&d));
        assert!(
            d.findings.iter().all(|f| f.severity == Severity::Info),
            "{name}: {:?}",
            d.findings.iter().map(|f| &f.title).collect::<Vec<_>>()
        );
        let layer = d
            .layers
            .iter()
            .find(|l| l.layer == Layer::Framework)
            .unwrap();
        assert_eq!(layer.status, Status::Ok);
        assert!(
            layer
                .evidence
                .iter()
                .any(|e| e.fact.starts_with("jax-cuda13-plugin 0.11.2 (CUDA 13.x")),
            "{name}: {:?}",
            layer.evidence
        );
        assert!(
            text(&d).contains("cupy-cuda13x 14.2.0 (CUDA 13.x"),
            "{name}"
        );
        for check in [
            CheckId::DriverOlderThanFrameworkCuda,
            CheckId::JaxPluginVersionMismatch,
        ] {
            assert!(
                matches!(d.outcome(check), gpukb_doctor::CheckOutcome::Clear(_)),
                "{name}: {check} {:?}",
                d.outcome(check)
            );
        }
    }
}

#[test]
fn the_healthy_control_reads_tensorflow_and_onnxruntime_and_clears_them() {
    let (fp, d) = doctor("healthy/h200-frameworks");
    let fw = frameworks(&fp);
    let tf = fw.iter().find(|f| f.framework == "tensorflow").unwrap();
    let c = tf.cuda.value().unwrap();
    assert_eq!((c.major, c.minor, c.cudnn_major), (12, Some(5), Some(9)));
    assert!(
        matches!(tf.cuda.source(), gpukb_agent::fingerprint::Source::File { path } if path.ends_with("tensorflow/python/platform/build_info.py"))
    );
    let ort = fw
        .iter()
        .find(|f| f.framework == "onnxruntime-gpu")
        .unwrap();
    assert!(!ort.loads.is_empty());
    assert!(
        ort.loads.iter().all(|l| l.path.is_some()),
        "{:?}",
        ort.loads
    );
    assert!(matches!(
        d.outcome(CheckId::OnnxruntimeCudaLibraryMissing),
        gpukb_doctor::CheckOutcome::Clear(_)
    ));
}

#[test]
fn a_jax_cuda13_plugin_on_r570_needs_r580_or_the_cuda12_plugin() {
    let (_, d) = doctor("broken/jax-cuda13-plugin-on-r570-driver");
    assert_eq!(d.verdict, Verdict::Failure);
    let f = root(&d);
    assert_eq!(f.check, CheckId::DriverOlderThanFrameworkCuda);
    assert_eq!(f.layer, Layer::CudaDriver);
    assert_eq!(f.severity, Severity::Failure);
    assert!(f.title.contains("CUDA 12.8"), "{}", f.title);
    assert!(f.title.contains("jax-cuda13-plugin 0.11.2"), "{}", f.title);
    assert!(f.title.contains("580"), "{}", f.title);
    // Computed from this machine: the H200 takes the R580 open modules, and
    // keeping the driver means jax's CUDA 12 plugin of the same release.
    let c = commands(f);
    assert!(
        c.iter().any(|c| c.contains("nvidia-driver-580-open")),
        "{c:?}"
    );
    assert!(
        c.iter().any(|c| c.contains("\"jax[cuda12]==0.11.2\"")),
        "{c:?}"
    );
    assert!(
        c.iter()
            .any(|c| c.contains("pip uninstall -y jax-cuda13-plugin jax-cuda13-pjrt")),
        "{c:?}"
    );
    assert!(f.fixes.iter().all(|s| s.for_this_machine));
    assert_eq!(
        f.kb_entries.first().map(String::as_str),
        Some("fw-framework-cuda-newer-than-driver")
    );
}

#[test]
fn a_jax_plugin_of_another_release_than_jaxlib_is_the_cause() {
    let (fp, d) = doctor("broken/jax-plugin-older-than-jaxlib");
    let jax = frameworks(&fp)
        .into_iter()
        .find(|f| f.framework == "jax")
        .unwrap();
    assert_eq!(jax.version, "0.11.2");
    let f = root(&d);
    assert_eq!(f.check, CheckId::JaxPluginVersionMismatch);
    assert_eq!(f.layer, Layer::Framework);
    assert!(
        f.title.contains("jax-cuda13-plugin 0.11.2") && f.title.contains("jaxlib 0.12.0.1"),
        "{}",
        f.title
    );
    let c = commands(f);
    assert!(
        c.iter().any(|c| c.contains("\"jax[cuda13]==0.12.0.1\"")),
        "{c:?}"
    );
    assert_eq!(
        f.kb_entries.first().map(String::as_str),
        Some("jax-cuda-plugin-jaxlib-version-mismatch")
    );
    // The driver is fine for it: no driver finding.
    assert!(matches!(
        d.outcome(CheckId::DriverOlderThanFrameworkCuda),
        gpukb_doctor::CheckOutcome::Clear(_)
    ));
}

#[test]
fn onnxruntime_without_cublaslt_12_falls_back_to_the_cpu() {
    let (fp, d) = doctor("broken/onnxruntime-gpu-cublaslt-missing");
    let ort = frameworks(&fp)
        .into_iter()
        .find(|f| f.framework == "onnxruntime-gpu")
        .unwrap();
    let c = ort.cuda.value().unwrap();
    assert_eq!((c.major, c.cudnn_major), (12, Some(9)));
    assert!(matches!(ort.cuda, Observed::Found { .. }));
    let lt = ort
        .loads
        .iter()
        .find(|l| l.soname == "libcublasLt.so.12")
        .unwrap();
    assert_eq!(lt.path, None);
    let f = root(&d);
    assert_eq!(f.check, CheckId::OnnxruntimeCudaLibraryMissing);
    assert_eq!(f.layer, Layer::CudaLibraries);
    assert_eq!(f.severity, Severity::Failure);
    assert!(f.title.contains("libcublasLt.so.12"), "{}", f.title);
    let c = commands(f);
    assert!(
        c.iter()
            .any(|c| c.starts_with("pip install") && c.contains("nvidia-cublas-cu12")),
        "{c:?}"
    );
    // The env carries CUDA 13 wheels (torch cu130): a CUDA 13 onnxruntime-gpu fits them.
    assert!(
        c.contains(&"pip install --force-reinstall 'onnxruntime-gpu>=1.27.0'"),
        "{c:?}"
    );
    assert_eq!(
        f.kb_entries.first().map(String::as_str),
        Some("onnxruntime-cuda-provider-load-failed")
    );
}

#[test]
fn cuda_libraries_only_in_the_envs_wheels_are_a_warning_not_a_failure() {
    // The same machine, with CUDA 12 wheels in the env that the provider's
    // loader path does not reach: onnxruntime.preload_dlls() (or importing a
    // torch of the same CUDA major first) loads them, a plain session does not.
    let mut fp = replay("broken/onnxruntime-gpu-cublaslt-missing");
    let env = fp
        .python
        .iter()
        .find(|e| {
            e.frameworks
                .iter()
                .any(|f| f.framework == "onnxruntime-gpu")
        })
        .unwrap()
        .site_packages
        .clone();
    let missing: Vec<String> = frameworks(&fp)
        .iter()
        .flat_map(|f| &f.loads)
        .filter(|l| l.path.is_none())
        .map(|l| l.soname.clone())
        .collect();
    assert!(!missing.is_empty());
    let template = fp.libraries.files[0].clone();
    for so in &missing {
        let mut f = template.clone();
        f.soname = so.clone();
        f.path = format!("{env}/nvidia/cublas/lib/{so}");
        f.real_path = f.path.clone();
        f.found_via = "pip nvidia-cublas-cu12 12.9.1.4".into();
        fp.libraries.files.push(f);
    }
    let d = gpukb_doctor::diagnose(&fp, "edited");
    let f = d
        .findings
        .iter()
        .find(|f| f.check == CheckId::OnnxruntimeCudaLibraryMissing)
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("preload_dlls"), "{}", f.title);
    assert_eq!(d.verdict, Verdict::Warning);
}
