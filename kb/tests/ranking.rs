//! Search ranking with machine facts: the paste's own facts are compared with the
//! machine's (agreement), a confirmed candidate moves first, a ruled-out one is set aside
//! with its reason, confidence never increases down the results, and candidates that
//! share text get the command that tells them apart.

use gpukb_facts::read::fingerprint_from_json;
use gpukb_facts::Fingerprint;
use gpukb_kb::agreement::compare;
use gpukb_kb::{Kb, MachineFacts, RuleOutcome};
use serde_json::{json, Value};

const H200: &str = include_str!("../../tests/fixtures/h200/fingerprint.json");

fn h200() -> Value {
    serde_json::from_str(H200).unwrap()
}

fn fp(v: &Value) -> Fingerprint {
    fingerprint_from_json(v.to_string().as_bytes()).unwrap()
}

/// The category of the first answer for `text` on text alone.
fn first_category(kb: &Kb, text: &str) -> String {
    kb.search(text, None, 3).unwrap()[0].category.clone()
}

#[test]
fn a_paste_from_another_machine_contradicts_the_h200() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(
        b"NVIDIA GeForce RTX 3060 with driver 470.82.01\ntorch 1.12.1+cu113\nno kernel image is available",
    );
    assert_eq!(q.signals.driver_versions, vec!["470.82.01"]);
    assert_eq!(q.signals.gpu_models, vec!["rtx 3060"]);
    assert_eq!(q.signals.torch_versions, vec!["1.12.1+cu113"]);
    let a = compare(&q.signals, &fp(&h200()));
    assert_eq!(a.contradicts.len(), 3, "{a:?}");
    assert!(a.contradicts[0].contains("580.159.04"), "{a:?}");
    let why = a.reason_not_applied().unwrap();
    assert!(
        why.starts_with("this machine does not look like the one in the paste"),
        "{why}"
    );
}

#[test]
fn a_paste_from_this_machine_agrees() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(
        b"Driver Version: 580.159.04 | NVIDIA H200 | torch 2.11.0\nCUDA error: out of memory",
    );
    let a = compare(&q.signals, &fp(&h200()));
    assert!(a.contradicts.is_empty(), "{a:?}");
    assert_eq!(a.agrees.len(), 3, "{a:?}");
    assert!(a.reason_not_applied().is_none());
    // A paste without facts of its own contradicts nothing.
    let q = kb.analyze(b"RuntimeError: CUDA error: out of memory");
    assert_eq!(compare(&q.signals, &fp(&h200())), Default::default());
}

#[test]
fn ip_addresses_and_cuda_versions_are_not_driver_releases() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(b"connect to 192.168.100.12 failed; CUDA Version: 12.8; build 2.5.1");
    assert!(q.signals.driver_versions.is_empty(), "{:?}", q.signals);
    let q = kb.analyze(b"NVIDIA-SMI 550.54.14  Driver Version: 550.54");
    assert_eq!(q.signals.driver_versions, vec!["550.54.14", "550.54"]);
}

#[test]
fn multibyte_text_before_a_driver_release_is_read_without_a_panic() {
    let kb = Kb::open().unwrap();
    // Some of these prefixes put the 40-byte look-back inside a 3-byte character.
    for k in 0..3 {
        let paste = format!("{}{} driver 550.54", "a".repeat(k), "€".repeat(20));
        let q = kb.analyze(paste.as_bytes());
        assert_eq!(q.signals.driver_versions, vec!["550.54"], "{paste}");
    }
}

fn blackwell_on_old_torch() -> Value {
    let mut v = h200();
    for g in v["nvml"]["value"]["gpus"].as_array_mut().unwrap() {
        g["compute_capability"] = json!("12.0");
        g["name"] = json!("NVIDIA GeForce RTX 5090");
    }
    let t = &mut v["python"][0]["torch"];
    t["version"] = json!("2.0.1+cu117");
    t["cuda"] = json!("11.7");
    t["kernels"]["value"]["targets"] = json!([
        {"kind": "sass", "arch": 80, "variant": "plain", "version": [1, 7], "compressed": false, "count": 1},
        {"kind": "sass", "arch": 86, "variant": "plain", "version": [1, 7], "compressed": false, "count": 1}
    ]);
    v
}

#[test]
fn the_machine_confirms_first_rules_out_aside_and_confidence_never_rises() {
    let kb = Kb::open().unwrap();
    let paste =
        b"RuntimeError: CUDA error: no kernel image is available for execution on the device";
    let q = kb.analyze(paste);
    let d = MachineFacts::observe(&fp(&blackwell_on_old_torch()), "test");
    let r = kb.rank(&q, Some(&d), 5).unwrap();
    let first = &r.results[0];
    let m = first.machine.as_ref().unwrap();
    assert_eq!(m.outcome(), RuleOutcome::Confirmed, "{:?}", first.id);
    assert_eq!(m.check(), Some("torch_lacks_gpu_arch"));
    assert!(first.confidence >= 0.9);
    for w in r.results.windows(2) {
        assert!(
            w[0].confidence >= w[1].confidence,
            "{} then {}",
            w[0].confidence,
            w[1].confidence
        );
    }
    // Every result carries the machine's word, and nothing ruled out is among them.
    assert!(r.results.iter().all(|h| h
        .machine
        .as_ref()
        .is_some_and(|m| m.outcome() != RuleOutcome::RuledOut)));

    // On the healthy H200 the same paste's arch causes are ruled out, with the reason.
    let d = MachineFacts::observe(&fp(&h200()), "test");
    let r = kb.rank(&q, Some(&d), 5).unwrap();
    let out = r
        .ruled_out
        .iter()
        .find(|h| h.id == "torch-wheel-missing-gpu-arch")
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                r.ruled_out.iter().map(|h| &h.id).collect::<Vec<_>>()
            )
        });
    let m = out.machine.as_ref().unwrap();
    assert_eq!(m.outcome(), RuleOutcome::RuledOut);
    assert!(!m.because().is_empty());
    assert!(!m.evidence().is_empty());
    assert_eq!(m.environment().map(|e| e.process.as_str()), Some("test"));
    assert!(!r.results.iter().any(|h| h.id == out.id));
    for w in r.results.windows(2) {
        assert!(w[0].confidence >= w[1].confidence);
    }
}

#[test]
fn text_alone_keeps_every_candidate_and_no_machine_word() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(
        b"RuntimeError: CUDA error: no kernel image is available for execution on the device",
    );
    let r = kb.rank(&q, None, 5).unwrap();
    assert!(r.ruled_out.is_empty());
    assert!(r.results.iter().all(|h| h.machine.is_none()));
    for w in r.results.windows(2) {
        assert!(w[0].confidence >= w[1].confidence);
    }
}

#[test]
fn causes_that_share_a_message_get_the_command_that_tells_them_apart() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(b"Failed to initialize NVML: Driver/library version mismatch");
    let r = kb.rank(&q, None, 5).unwrap();
    let d = r.distinguish.expect("a distinguishing command");
    assert_eq!(d.between.len(), 2);
    assert_eq!(d.between[0], r.results[0].id);
    assert!(!d.command.is_empty());
    assert!(d.answers.len() >= 2, "{d:?}");
    assert!(d
        .answers
        .iter()
        .all(|a| !a.if_.is_empty() && !a.then.is_empty()));
}

#[test]
fn a_distinguishing_command_tells_the_two_causes_apart() {
    // torch's "Found no NVIDIA driver" has two causes: no NVIDIA GPU in the machine, or a GPU
    // without its driver; both entries are confirmed by the same machine check, so the
    // command offered must be one whose answers differ (lspci), never two equal answers
    let kb = Kb::open().unwrap();
    for paste in [
        &b"RuntimeError: Found no NVIDIA driver on your system."[..],
        b"RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
    ] {
        let r = kb.rank(&kb.analyze(paste), None, 5).unwrap();
        let ids: Vec<&str> = r.results.iter().take(2).map(|h| h.id.as_str()).collect();
        assert!(ids.contains(&"no-cuda-gpu-available"), "{ids:?}");
        assert!(ids.contains(&"nvidia-driver-not-installed"), "{ids:?}");
        let d = r.distinguish.expect("a distinguishing command");
        assert!(d.command.contains("lspci"), "{d:?}");
        assert!(d.answers.len() >= 2, "{d:?}");
        assert_ne!(d.answers[0].if_, d.answers[1].if_, "{d:?}");
    }
}

/// The bare kernel-image error has several causes (a build older than the GPU, a build that
/// dropped it, an extension built without it): the command offered answers which, each
/// outcome ruling out one of the two causes it names.
#[test]
fn a_kernel_image_error_s_command_decides_between_the_causes_it_names() {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(
        b"RuntimeError: CUDA error: no kernel image is available for execution on the device",
    );
    let r = kb.rank(&q, None, 5).unwrap();
    let d = r.distinguish.expect("a distinguishing command");
    assert!(d.command.contains("get_device_capability"), "{d:?}");
    for id in &d.between {
        assert!(
            d.answers
                .iter()
                .any(|a| a.then.contains(&format!("[{id}]"))),
            "no answer rules out {id}: {d:?}"
        );
    }
}

/// Wherever one of the two entries has a command whose answers rule out one of them, that
/// command is the one offered, not one whose answers speak only of other entries: over the
/// first example of every entry.
#[test]
fn the_command_offered_is_one_that_decides_when_there_is_one() {
    let kb = Kb::open().unwrap();
    let mut checked = 0;
    for e in kb.list(None).unwrap() {
        let Some((_, text)) = kb.examples(&e.id).unwrap().into_iter().next() else {
            continue;
        };
        let r = kb.rank(&kb.analyze(text.as_bytes()), None, 5).unwrap();
        let Some(d) = &r.distinguish else { continue };
        let pair: Vec<_> = r
            .results
            .iter()
            .filter(|h| d.between.contains(&h.id))
            .collect();
        let decides = pair.iter().flat_map(|h| &h.confirm).any(|c| {
            c.answers
                .iter()
                .any(|a| a.rules_out.iter().any(|id| d.between.contains(id)))
        });
        if !decides {
            continue;
        }
        checked += 1;
        assert!(
            d.between.iter().any(|id| d
                .answers
                .iter()
                .any(|a| a.then.contains(&format!("[{id}]")))),
            "{}: the command offered rules out neither of {:?}: {d:?}",
            e.id,
            d.between
        );
    }
    assert!(checked >= 5, "checked {checked}");
}

#[test]
fn who_printed_no_kernel_image_decides_whose_build_lacks_the_gpu() {
    // PyTorch prints 'CUDA error: <message>'; a C/C++ program's own check prints its own
    // form, and then the program's build, not the torch wheel, holds no code for this GPU.
    let kb = Kb::open().unwrap();
    let first = |text: &str| first_category(&kb, text);
    let torch =
        "RuntimeError: CUDA error: no kernel image is available for execution on the device";
    assert_eq!(first(torch), "arch_mismatch_wheel");
    for program in [
        "cudaCheckError() failed : no kernel image is available for execution on the device",
        "CUDA Error: no kernel image is available for execution on the device\nfoo: ./src/cuda.c:36: check_error: Assertion `0' failed.",
        "Error: no kernel image is available for execution on the device 209",
        "Failed to launch myKernel (error code no kernel image is available for execution on the device)!",
        "CUDA kernel failed : no kernel image is available for execution on the device",
        "[error][kernels.cu:41]:launch failed: no kernel image is available for execution on the device",
        "CUDA ERROR kernels.cu: 88 invalid device symbol",
        "terminate called after throwing an instance of 'thrust::THRUST_200301_700_NS::system::system_error'\n  what():  after determining tmp storage requirements for exclusive_scan: cudaErrorNoKernelImageForDevice: no kernel image is available for execution on the device",
    ] {
        assert_eq!(first(program), "build_arch_missing", "{program}");
    }
}

#[test]
fn macos_loading_a_cuda_library_means_no_nvidia_gpu_but_a_linux_loader_does_not() {
    // dyld's form names a Mac (no CUDA since 10.2); a Linux program merely trying a
    // .dylib name gets the Linux loader's 'cannot open shared object file'.
    let kb = Kb::open().unwrap();
    let first = |text: &str| first_category(&kb, text);
    assert_eq!(
        first("could not load library \"libcuda\"\ndlopen(libcuda.dylib, 1): image not found"),
        "no_nvidia_gpu"
    );
    assert_eq!(
        first("OSError: dlopen(/opt/lib/libcudart.12.dylib, 0x0006): tried: '/opt/lib/libcudart.12.dylib' (no such file)"),
        "no_nvidia_gpu"
    );
    assert_ne!(
        first("dlerror: libcuda.so: cannot open shared object file: No such file or directory\ndlerror: libcuda.dylib: cannot open shared object file: No such file or directory"),
        "no_nvidia_gpu"
    );
}

#[test]
fn who_ran_ptxas_decides_triton_or_the_toolkit() {
    // ptxas's own 'not defined for option gpu-name' line does not say who ran it: Triton's
    // bundled assembler (ptxas-blackwell, its repro path, its PTXASError wrapper) is a Triton
    // problem; the toolkit's ptxas (nvcc, CMake, XLA's asm compiler) is the toolkit's.
    let kb = Kb::open().unwrap();
    let first = |text: &str| first_category(&kb, text);
    for triton in [
        "ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'",
        "PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
        "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\nRepro command: /venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_121a /tmp/k.ptx -o /tmp/k.ptx.o",
    ] {
        assert_eq!(first(triton), "triton_ptxas_error", "{triton}");
    }
    for toolkit in [
        "ptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'",
        "W external/org_tensorflow/tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack is old. We fallback to the NVIDIA driver for some compilation. Update your CUDA version to get the best performance. The ptxas error was: ptxas fatal   : Value 'sm_86' is not defined for option 'gpu-name'",
    ] {
        assert_eq!(first(toolkit), "nvcc_arch_unsupported", "{toolkit}");
    }
    // an old arch a ptxas refuses was dropped from that toolkit: a newer one would not help
    assert_eq!(
        first("ptxas fatal   : Value 'sm_30' is not defined for option 'gpu-name'"),
        "nvcc_arch_dropped"
    );
}

#[test]
fn cudnn8s_bare_error_126_is_its_dlls_not_found_and_zlib_only_when_named() {
    // Windows error 126 means the DLL or one of its imports was not found: the bare line is
    // cuDNN's DLLs off PATH first, zlib among the answers; cuDNN naming zlibwapi.dll decides.
    let kb = Kb::open().unwrap();
    let bare = "Could not load library cudnn_ops_infer64_8.dll. Error code 126\nPlease make sure cudnn_ops_infer64_8.dll is in your library path!";
    let hits = kb.search(bare, None, 3).unwrap();
    assert_eq!(hits[0].id, "libcudnn-not-installed-or-not-on-path");
    assert!(
        hits.iter().any(|h| h.category == "cudnn_zlib_missing"),
        "{:?}",
        hits.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
    let named = "Could not locate zlibwapi.dll. Please make sure it is in your library path!";
    assert_eq!(first_category(&kb, named), "cudnn_zlib_missing");
}

#[test]
fn pytorchs_lazy_nvrtc_load_failing_is_a_missing_nvrtc() {
    let kb = Kb::open().unwrap();
    for text in [
        "terminate called after throwing an instance of 'c10::DynamicLibraryError'\n  what():  Error in dlopen for library libnvrtc.so.11.2and libnvrtc-672ee683.so.11.2",
        "RuntimeError: Error in dlopen or dlsym: libcaffe2_nvrtc.so: cannot open shared object file: No such file or directory",
        "terminate called after throwing an instance of 'c10::DynamicLibraryError'",
    ] {
        let hits = kb.search(text, None, 3).unwrap();
        assert_eq!(hits[0].id, "cuda-math-library-not-found", "{text}");
    }
}

#[test]
fn cccls_compiler_and_headers_check_is_two_toolkits_mixed() {
    // CCCL stops when nvcc's release differs from the cuda_runtime_api.h it includes: the
    // build mixes two toolkits (pip nvcc over other headers, CUDA_HOME vs PATH)
    let kb = Kb::open().unwrap();
    let text = "/venv/lib/python3.12/site-packages/nvidia/cu13/include/cccl/cuda/std/__cccl/cuda_toolkit.h:41:6: error: #error \"CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths\"";
    let hits = kb.search(text, None, 3).unwrap();
    assert_eq!(
        hits[0].id,
        "nvcc-and-toolkit-headers-from-different-releases"
    );
    assert_eq!(hits[0].category, "cuda_home_mismatch");
}

#[test]
fn a_library_the_failing_process_could_not_open_is_not_ruled_out_by_torchs_loader() {
    // The H200's torch finds libcudnn.so.9 through its RPATH; a process that says it could
    // not open libcudnn.so.9 is another one (an extension or program with its own search
    // path), so the model of torch's loader must not rule "cuDNN not on the loader path" out.
    let kb = Kb::open().unwrap();
    let text =
        b"ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory";
    let q = kb.analyze(text);
    assert_eq!(q.signals.missing_libraries, vec!["libcudnn.so.9"]);
    let a = compare(&q.signals, &fp(&h200()));
    assert_eq!(a.differs.len(), 1, "{a:?}");
    assert!(a.differs[0]
        .sentence()
        .contains("could not open libcudnn.so.9"));
    let d = MachineFacts::observe(&fp(&h200()), "test");
    let r = kb.rank(&q, Some(&d), 5).unwrap();
    let ids = |hs: &[gpukb_kb::search::Hit]| hs.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert!(
        !ids(&r.ruled_out).contains(&"libcudnn-not-installed-or-not-on-path".to_string()),
        "ruled out: {:?}",
        ids(&r.ruled_out)
    );
    assert_eq!(
        r.results[0].id,
        "libcudnn-not-installed-or-not-on-path",
        "{:?}",
        ids(&r.results)
    );
    // A library torch's loader does not know stays ruled by the check as before.
    let q = kb.analyze(
        b"OSError: libfoo_bar.so.3: cannot open shared object file: No such file or directory",
    );
    assert!(compare(&q.signals, &fp(&h200())).differs.is_empty());
}
