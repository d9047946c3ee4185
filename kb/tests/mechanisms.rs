//! Entries by mechanism, not by phrase: one failure (a CUDA library the loader cannot find,
//! one older than the build, NVML's return codes) is generated for every library, major
//! version and message form the products print it in, and each variant must get the
//! mechanism's cause first. The message forms are the products' own format strings (the
//! dynamic loader, TensorFlow's dso_loader, ONNX Runtime's provider bridge, CTranslate2,
//! CuPy, the jax CUDA plugin, go-nvml), not any one user's paste.

use gpukb_kb::Kb;

fn first_cause(kb: &Kb, text: &str) -> Option<String> {
    kb.search(text, None, 3)
        .unwrap()
        .first()
        .map(|h| h.category.clone())
}

/// Runs every case and fails with the list of wrong ones (expected causes: any of).
fn check(kb: &Kb, cases: &[(String, &[&str])]) {
    let map = kb.category_map().unwrap();
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(text, want)| {
            let got = first_cause(kb, text);
            let ok = got
                .as_deref()
                .is_some_and(|g| want.iter().any(|w| map.same_cause(w, g)));
            (!ok).then(|| format!("{text}\n   want {want:?}, got {got:?}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} variants wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// The CUDA math/compiler libraries, by Linux soname stem and Windows DLL stem.
const LIBRARIES: &[(&str, &str)] = &[
    ("libcublas", "cublas64"),
    ("libcublasLt", "cublasLt64"),
    ("libcufft", "cufft64"),
    ("libcurand", "curand64"),
    ("libcusolver", "cusolver64"),
    ("libcusparse", "cusparse64"),
    ("libnvrtc", "nvrtc64"),
];

#[test]
fn a_cuda_library_the_loader_cannot_find_is_a_missing_library_in_every_form() {
    let kb = Kb::open().unwrap();
    let missing: &[&str] = &["missing_runtime_lib"];
    // Only onnxruntime-gpu's CUDA 11 build asks for a .so.11 library (the PyPI default has
    // been the CUDA 12 build since 1.19): that build is the cause.
    let ort_cuda11: &[&str] = &["ext_cuda_version_mismatch"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for (so, dll) in LIBRARIES {
        for major in [11, 12, 13] {
            let soname = format!("{so}.so.{major}");
            let dllname = format!("{dll}_{major}.dll");
            // ONNX Runtime's provider bridge (its CUDA provider links cuBLAS, cuBLASLt,
            // cuFFT and cuRAND of this list)
            let ort_links = ["libcublas", "libcublasLt", "libcufft", "libcurand"].contains(so);
            cases.extend(ort_links.then(|| (
                format!("[E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] Failed to load library libonnxruntime_providers_cuda.so with error: {soname}: cannot open shared object file: No such file or directory"),
                if major == 11 { ort_cuda11 } else { missing },
            )));
            let forms = [
                // the dynamic loader, through Python's ctypes / an import
                format!("OSError: {soname}: cannot open shared object file: No such file or directory"),
                // TensorFlow's dso_loader
                format!("W tensorflow/tsl/platform/default/dso_loader.cc:66] Could not load dynamic library '{soname}'; dlerror: {soname}: cannot open shared object file: No such file or directory"),
                // CuPy
                format!("RuntimeError: CuPy failed to load {soname}: OSError: {soname}: cannot open shared object file: No such file or directory"),
                // CTranslate2 on Windows and Linux
                format!("RuntimeError: Library {dllname} is not found or cannot be loaded"),
                format!("RuntimeError: Library {soname} is not found or cannot be loaded"),
                // a Windows DLL lookup
                format!("Could not locate {dllname}. Please make sure it is in your library path!"),
                // a program's own loader message without the loader's reason (cuDNN, a
                // hand-written dlopen check)
                format!("Could not load library {soname}."),
                format!("error: failed to dlopen {soname}"),
            ];
            // As of 2026-12 a CUDA 11 soname of a library whose soname is the CUDA major
            // (cuBLAS, cuBLASLt, NVRTC), reported by the loader, is first a build for that
            // older CUDA; cuFFT/cuRAND/cuSOLVER/cuSPARSE sonames are not CUDA majors.
            let major_tied = ["libcublas", "libcublasLt", "libnvrtc"].contains(so);
            cases.extend(forms.into_iter().map(|c| {
                // the loader's own words; TensorFlow's and CuPy's loaders name the CUDA they
                // expect the user to install, and stay a missing library
                let old_build = major == 11 && major_tied && c.starts_with("OSError");
                (c, if old_build { ort_cuda11 } else { missing })
            }));
        }
    }
    check(&kb, &cases);
}

#[test]
fn jax_names_the_library_its_plugin_cannot_load_or_finds_too_old() {
    let kb = Kb::open().unwrap();
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for name in ["CUDA", "cuBLAS", "cuSPARSE", "cuSOLVER", "cuFFT", "cuPTI"] {
        cases.push((
            format!("RuntimeError: Unable to load {name}. Is it installed?"),
            &["missing_runtime_lib"],
        ));
        cases.push((
            format!("CUDA backend failed to initialize: Found {name} version 12010, but JAX was built against version 12030, which is newer. The copy of {name} that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"),
            &["env_cuda_runtime_mismatch"],
        ));
    }
    cases.push((
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.".into(),
        &["lib_built_without_cuda"],
    ));
    check(&kb, &cases);
}

#[test]
fn go_nvml_prints_nvml_return_codes_without_their_prefix() {
    let kb = Kb::open().unwrap();
    let want: &[&str] = &["driver_not_installed", "k8s_device_plugin_config"];
    let cases: Vec<(String, &[&str])> = [
        "E0612 09:14:22.120110       1 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.",
        "{\"level\":\"error\",\"ts\":1733300000.1,\"msg\":\"Failed to initialize NVML\",\"error\":\"ERROR_LIBRARY_NOT_FOUND\"}",
        "time=\"2025-06-01T10:00:00Z\" level=error msg=\"nvml init failed: ERROR_LIBRARY_NOT_FOUND\"",
    ]
    .into_iter()
    .map(|t| (t.to_string(), want))
    .collect();
    check(&kb, &cases);
}

/// The causes of the first three answers.
fn top3_causes(kb: &Kb, text: &str) -> Vec<String> {
    kb.search(text, None, 3)
        .unwrap()
        .into_iter()
        .map(|h| h.category)
        .collect()
}

#[test]
fn a_driver_api_function_the_loaded_driver_lacks_is_a_driver_older_than_the_build() {
    let kb = Kb::open().unwrap();
    let older: &[&str] = &["cuda_minor_compat_api", "driver_too_old"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    // driver API functions added over CUDA 11-12 (green contexts, launch attributes, tensor
    // maps, the library API, virtual memory management)
    for sym in [
        "cuGreenCtxCreate",
        "cuGreenCtxDestroy",
        "cuCtxCreate_v3",
        "cuLaunchKernelEx",
        "cuTensorMapEncodeTiled",
        "cuLibraryLoadData",
        "cuKernelGetFunction",
        "cuMemCreate",
        "cuDevSmResourceSplitByCount",
    ] {
        for form in [
            // an extension linked against libcuda, imported by Python
            format!("ImportError: /opt/venv/lib/python3.12/site-packages/fastops/_C.abi3.so: undefined symbol: {sym}"),
            // the dynamic loader running a program
            format!("./bin/server: symbol lookup error: ./lib/libkernels.so: undefined symbol: {sym}"),
            // Windows' loader and a Go program's dlsym
            format!("The procedure entry point {sym} could not be located in the dynamic link library C:\\WINDOWS\\system32\\nvcuda.dll."),
            format!("msg=\"unable to load cuda driver library\" error=\"symbol lookup for {sym} failed\""),
        ] {
            cases.push((form, older));
        }
    }
    check(&kb, &cases);
    // a library's own API (cuBLASLt, cuDNN, the runtime) missing a symbol is not the driver's
    for lib_symbol in [
        "OSError: /opt/conda/lib/libcublas.so.12: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.12",
        "ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12",
        "OSError: /opt/venv/lib/libcudnn_graph.so.9: undefined symbol: cudnnGetLastErrorString",
    ] {
        let got = first_cause(&kb, lib_symbol);
        assert!(
            !got.as_deref().is_some_and(|g| older.contains(&g)),
            "{lib_symbol}\n   got {got:?}"
        );
    }
}

#[test]
fn a_package_built_for_another_cuda_major_names_both_majors() {
    let kb = Kb::open().unwrap();
    let other: &[&str] = &["ext_cuda_version_mismatch"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for lib in ["libcudart", "libcublas", "libcublasLt", "libnvrtc"] {
        // built for CUDA 11, the machine has 12 (or 13)
        for have in [
            "torch 2.5.1+cu124",
            "CUDA Version: 12.4",
            "nvcc: Cuda compilation tools, release 13.0, V13.0.88",
        ] {
            cases.push((format!("$ python -c 'import torch'; {have}\nImportError: {lib}.so.11: cannot open shared object file: No such file or directory"), other));
            cases.push((format!("ImportError: {lib}.so.11: cannot open shared object file: No such file or directory\n$ pip list | grep torch\n{have}"), other));
        }
    }
    // CTranslate2 names the libraries it loads itself (cuBLAS, cuBLASLt) this way
    for dll in ["cublas64_12.dll", "cublasLt64_12.dll"] {
        // built for CUDA 12, the machine has 11
        cases.push((format!("RuntimeError: Library {dll} is not found or cannot be loaded\nC:\\> nvcc --version\nCuda compilation tools, release 11.8, V11.8.89"), other));
    }
    check(&kb, &cases);
    // alone, a CUDA 11 soname is first a build for that older CUDA (as of 2026-12), a
    // current one first a missing library, and the other reason is among the first three
    for (bare, first, next) in [
        ("OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory", "ext_cuda_version_mismatch", "missing_runtime_lib"),
        ("error while loading shared libraries: libcublas.so.11: cannot open shared object file: No such file or directory", "ext_cuda_version_mismatch", "missing_runtime_lib"),
        ("OSError: libcudart.so.12: cannot open shared object file: No such file or directory", "missing_runtime_lib", "ext_cuda_version_mismatch"),
        ("RuntimeError: Library cublas64_12.dll is not found or cannot be loaded", "missing_runtime_lib", "ext_cuda_version_mismatch"),
    ] {
        let got = top3_causes(&kb, bare);
        assert_eq!(got.first().map(String::as_str), Some(first), "{bare}: {got:?}");
        assert!(got.iter().any(|g| g == next), "{bare}: {got:?}");
    }
}

#[test]
fn a_bare_no_kernel_image_lists_a_newer_gpu_an_older_gpu_and_a_prebuilt_package() {
    let kb = Kb::open().unwrap();
    for form in [
        "CUDA error: no kernel image is available for execution on the device",
        "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ] {
        let got = top3_causes(&kb, form);
        for want in ["arch_mismatch_wheel", "gpu_arch_dropped", "arch_mismatch_prebuilt"] {
            assert!(got.iter().any(|g| g == want), "{form}: {want} not in {got:?}");
        }
    }
}

#[test]
fn a_driver_library_no_loader_can_load_is_a_missing_driver_in_every_form() {
    let kb = Kb::open().unwrap();
    let want: &[&str] = &["driver_not_installed"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    // The versioned sonames, which the driver installs (an unversioned libcuda.so is the
    // development link: its absence says less).
    for lib in ["libcuda.so.1", "libnvidia-ml.so.1"] {
        for form in [
            // glibc's loader, through ctypes / an import
            "OSError: {lib}: cannot open shared object file: No such file or directory",
            // TensorFlow's dso_loader, with and without the dlerror
            "W tensorflow/tsl/platform/default/dso_loader.cc:64] Could not load dynamic library '{lib}'; dlerror: {lib}: cannot open shared object file: No such file or directory",
            "W external/local_tsl/tsl/platform/default/dso_loader.cc:64] Could not load dynamic library '{lib}'",
            // libfabric, cuda-bindings, hand-written dlopen checks
            "libfabric:812:1733::core:core:cuda_hmem_dl_init():512<warn> Failed to dlopen {lib}",
            "RuntimeError: Failed to dlopen {lib}",
            "error: unable to load {lib}",
        ] {
            cases.push((form.replace("{lib}", lib), want));
        }
    }
    for form in [
        "Could not load dynamic library 'nvcuda.dll'; dlerror: nvcuda.dll not found",
        "RuntimeError: Failed to load nvcuda.dll",
    ] {
        cases.push((form.to_string(), want));
    }
    check(&kb, &cases);
}

/// CUDA error-check macros of native programs and libraries: the file and line they print.
const NATIVE_CHECK_FORMS: &[&str] = &[
    "CUDA error at {file}:{line} code=209(cudaErrorNoKernelImageForDevice) \"{call}\"",
    "GPUassert: no kernel image is available for execution on the device {file} {line}",
    "CUDA status Error: file: {file} : {call} : line: {line}\nCUDA Error: no kernel image is available for execution on the device",
    "[{file}:{line}] (Error) CUDA Runtime error {call} no kernel image is available for execution on the device",
    "Error no kernel image is available for execution on the device at line {line} in file {file}",
];

#[test]
fn a_kernel_image_error_a_native_program_reports_from_its_own_source_is_not_the_torch_build() {
    let kb = Kb::open().unwrap();
    for form in NATIVE_CHECK_FORMS {
        for file in [
            "/home/u/proj/src/convolution_kernels.cu",
            r"C:\build\app\kernels\reduce.cu",
            "csrc/sparse/hash_table.cu",
        ] {
            let text = form
                .replace("{file}", file)
                .replace("{line}", "273")
                .replace("{call}", "launch_kernel()");
            let got = first_cause(&kb, &text);
            assert_ne!(got.as_deref(), Some("arch_mismatch_wheel"), "{text}");
            assert!(
                top3_causes(&kb, &text)
                    .iter()
                    .any(|c| c == "build_arch_missing" || c == "arch_mismatch_prebuilt"),
                "{text}"
            );
            // The same report inside a PyTorch traceback: the torch build is a candidate.
            let torch =
                format!("{text}\nFile \"site-packages/torch/nn/modules/conv.py\", line 456");
            assert!(
                top3_causes(&kb, &torch)
                    .iter()
                    .any(|c| c == "arch_mismatch_wheel"),
                "{torch}"
            );
        }
    }
}

#[test]
fn kernels_a_driver_cannot_load_are_a_driver_older_than_their_toolkit() {
    let kb = Kb::open().unwrap();
    let older: &[&str] = &["driver_too_old"];
    let cases: Vec<(String, &[&str])> = [
        // ggml/llama.cpp's CUDA_CHECK, Triton's launcher, the driver API's name and CuPy
        "CUDA error: device kernel image is invalid\n  current device: 0, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2550",
        "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
        "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE",
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid",
        "error: cudaLaunchKernel returned cudaErrorInvalidKernelImage",
    ]
    .into_iter()
    .map(|t| (t.to_string(), older))
    .collect();
    check(&kb, &cases);
}

#[test]
fn a_cudnn_9_library_cudnn_cannot_open_is_first_a_library_off_the_loader_path() {
    let kb = Kb::open().unwrap();
    let missing: &[&str] = &["missing_runtime_lib"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for lib in [
        "ops",
        "cnn",
        "adv",
        "graph",
        "engines_precompiled",
        "heuristic",
    ] {
        cases.push((
            format!("Unable to load any of {{libcudnn_{lib}.so.9.5.1, libcudnn_{lib}.so.9.5, libcudnn_{lib}.so.9, libcudnn_{lib}.so}}"),
            missing,
        ));
    }
    check(&kb, &cases);
    // with cuDNN 8's libraries named next to it, the app and the machine have different majors
    let both = "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n$ ls /usr/lib/x86_64-linux-gnu | grep cudnn\nlibcudnn_ops_infer.so.8\nlibcudnn_cnn_infer.so.8";
    assert_eq!(
        first_cause(&kb, both).as_deref(),
        Some("cudnn_version_mismatch")
    );
}

#[test]
fn cublas_not_supported_is_a_configuration_it_has_no_kernel_for() {
    let kb = Kb::open().unwrap();
    for form in [
        "RuntimeError: cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED",
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmul( ltHandle, computeDesc.descriptor(), &alpha_val, mat1_ptr, Adesc.descriptor(), mat2_ptr, Bdesc.descriptor(), &beta_val, result_ptr, Cdesc.descriptor(), result_ptr, Cdesc.descriptor(), &heuristicResult.algo, workspace.mutable_data_ptr(), workspaceSize, at::cuda::getCurrentCUDAStream())`",
    ] {
        let got = top3_causes(&kb, form);
        assert_eq!(got.first().map(String::as_str), Some("cudnn_not_supported_input"), "{form}");
        assert!(got.iter().any(|g| g == "gpu_feature_unsupported"), "{form}: {got:?}");
    }
    // naming the BF16 data type says which configuration
    let bf16 = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`";
    assert_eq!(
        first_cause(&kb, bf16).as_deref(),
        Some("gpu_feature_unsupported")
    );
}

#[test]
fn a_module_the_running_kernel_refuses_or_lacks_is_one_not_built_for_it() {
    let kb = Kb::open().unwrap();
    let want: &[&str] = &["driver_module_not_built_for_kernel"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for module in ["nvidia", "nvidia_uvm", "nvidia_drm", "nvidia-current"] {
        for kernel in [
            "6.8.0-51-generic",
            "6.12.4-arch1-1",
            "5.14.0-503.el9.x86_64",
        ] {
            cases.push((
                format!("modprobe: ERROR: could not insert '{module}': Exec format error"),
                want,
            ));
            cases.push((format!("[  12.3] {module}: disagrees about version of symbol module_layout\nuname -r: {kernel}"), want));
            cases.push((
                format!(
                    "modprobe: FATAL: Module {module} not found in directory /lib/modules/{kernel}"
                ),
                want,
            ));
            cases.push((format!("Error! Your kernel headers for kernel {kernel} cannot be found.\nPlease install the linux-headers-{kernel} package"), want));
        }
    }
    check(&kb, &cases);
}

#[test]
fn version_and_architecture_checks_name_their_cause_for_every_value() {
    let kb = Kb::open().unwrap();
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    // nvcc older than the architecture asked for
    for arch in ["89", "90", "90a", "100", "100a", "103", "110", "120", "121"] {
        cases.push((
            format!("nvcc fatal   : Unsupported gpu architecture 'compute_{arch}'"),
            &["nvcc_arch_unsupported"],
        ));
    }
    // nvcc newer than an architecture it dropped (CUDA 9, 11, 12, 13)
    for arch in ["20", "30", "35", "37", "50", "52", "61", "70", "72"] {
        cases.push((
            format!("nvcc fatal   : Unsupported gpu architecture 'compute_{arch}'"),
            &["nvcc_arch_dropped"],
        ));
    }
    // PyTorch's capability check: a GPU newer than the wheel, or older than its minimum
    for (sm, name) in [
        ("120", "NVIDIA GeForce RTX 5090"),
        ("100", "NVIDIA B200"),
        ("90", "NVIDIA H100 80GB HBM3"),
        ("89", "NVIDIA L4"),
        ("86", "NVIDIA GeForce RTX 3090"),
    ] {
        cases.push((format!("UserWarning: \n{name} with CUDA capability sm_{sm} is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80."), &["arch_mismatch_wheel"]));
    }
    for (sm, name) in [
        ("61", "NVIDIA GeForce GTX 1080 Ti"),
        ("60", "Tesla P100-PCIE-16GB"),
        ("52", "NVIDIA GeForce GTX 980"),
        ("70", "Tesla V100-SXM2-16GB"),
    ] {
        cases.push((format!("UserWarning: \n{name} with CUDA capability sm_{sm} is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_90 sm_100 sm_120."), &["gpu_arch_dropped"]));
    }
    // the driver older than the runtime or the image, in each product's words
    for found in ["11040", "12020", "12040", "12060", "12080"] {
        cases.push((format!("RuntimeError: The NVIDIA driver on your system is too old (found version {found}). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx"), &["driver_too_old"]));
    }
    for cuda in ["12.4", "12.6", "12.8", "12.9", "13.0"] {
        cases.push((format!("nvidia-container-cli: requirement error: unsatisfied condition: cuda>={cuda}, please update your driver to a newer version, or use an earlier cuda container: unknown."), &["driver_too_old"]));
    }
    for form in [
        "CUDA driver version is insufficient for CUDA runtime version",
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version",
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version",
    ] {
        cases.push((form.to_string(), &["driver_too_old"]));
    }
    check(&kb, &cases);
}

#[test]
fn nvml_that_cannot_be_loaded_is_no_driver_except_on_a_jetson() {
    let kb = Kb::open().unwrap();
    // libnvidia-ml.so.1 ships with the driver; each tool's words for not finding it
    let forms = [
        "OSError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        "./monitor: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        "nvmlInit failed: NVML_ERROR_LIBRARY_NOT_FOUND",
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
        "pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
    ];
    // a Jetson (JetPack 5 and older have no NVML) says so in its release file, its module
    // name or its container's L4T tag
    let jetsons = [
        "$ cat /etc/nv_tegra_release\n# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64\n",
        "Jetson Orin NX 16GB, JetPack 5.1.2\n",
        "[jetson-containers] dustynv/l4t-pytorch:r35.2.1\n",
    ];
    let no_driver: &[&str] = &["driver_not_installed", "jetson_no_nvml"];
    let jetson: &[&str] = &["jetson_no_nvml"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for form in forms {
        // pynvml's own message is the same on both, so either cause is first without context
        cases.push((
            form.to_string(),
            if form.contains("pynvml") {
                no_driver
            } else {
                &["driver_not_installed"]
            },
        ));
        for j in jetsons {
            cases.push((format!("{j}{form}"), jetson));
        }
    }
    check(&kb, &cases);
}

#[test]
fn driver_files_missing_in_a_container_started_without_gpus_is_that_container() {
    let kb = Kb::open().unwrap();
    let missing = [
        "bash: nvidia-smi: command not found",
        "OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
    ];
    let no_runtime: &[&str] = &["container_no_gpu_runtime"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for tool in ["docker", "podman", "nerdctl"] {
        for verb in [
            "run -it --rm",
            "run --rm --name worker -e CUDA_VISIBLE_DEVICES=0",
        ] {
            for m in missing {
                cases.push((format!("$ {tool} {verb} img:cuda12 bash\n{m}"), no_runtime));
            }
        }
    }
    // Docker's default hostname (12 hex digits) in the prompt, which normalisation strips
    for m in missing {
        cases.push((format!("root@5c2f0e9a1b7d:/app# ./serve\n{m}"), no_runtime));
    }
    check(&kb, &cases);
    // with GPUs requested the runtime ran: a missing capability or driver, never 'no GPUs'
    for flags in [
        "--gpus all",
        "--gpus=all",
        "--runtime=nvidia",
        "--device nvidia.com/gpu=all",
    ] {
        for m in missing {
            let text = format!("$ docker run --rm {flags} img:cuda12 bash\n{m}");
            let got = first_cause(&kb, &text);
            assert_ne!(got.as_deref(), Some("container_no_gpu_runtime"), "{text}");
        }
    }
}

#[test]
fn an_undefined_symbol_says_whose_it_is_torch_or_the_cuda_runtime() {
    // The Itanium-mangled name of a missing symbol names its owner: at::, c10::, torch::,
    // c10d:: and caffe2:: are torch's C++ API (the extension was built against another torch),
    // while __cudaPushCallConfiguration/__cudaPopCallConfiguration are the CUDA runtime's
    // (compiled by a newer nvcc than torch's CUDA). Every extension path, symbol namespace and
    // spacing the loader prints must give that owner's cause first.
    let kb = Kb::open().unwrap();
    let torch_side: &[&str] = &["abi_undefined_symbol", "ext_torch_version_mismatch"];
    let cuda_side: &[&str] = &["cuda_home_mismatch", "ext_cuda_version_mismatch"];
    let paths = [
        "/opt/conda/lib/python3.10/site-packages/mmcv/_ext.cpython-310-x86_64-linux-gnu.so",
        "/home/u/.venv/lib/python3.11/site-packages/torch_scatter/_scatter_cuda.so",
        "/home/u/.venv/lib/python3.11/site-packages/detectron2/_C.cpython-311-x86_64-linux-gnu.so",
        "/work/ops/build/lib.linux-x86_64-3.10/roi_align_cuda.cpython-310-x86_64-linux-gnu.so",
    ];
    let torch_symbols = [
        "_ZN3c106Symbol14fromQualStringERKSs",
        "_ZNK2at10TensorBase8data_ptrIfEEPT_v",
        "_ZN5torch3jit17parseSchemaOrNameERKSs",
        "_ZN6caffe28TypeMeta21_typeMetaDataInstanceIfEEPKNS_6detail12TypeMetaDataEv",
        "_ZN3c104cuda20getCurrentCUDAStreamEa",
    ];
    let cuda_symbols = ["__cudaPushCallConfiguration", "__cudaPopCallConfiguration"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for path in paths {
        for sep in [": ", ":"] {
            for sym in torch_symbols {
                cases.push((
                    format!("ImportError: {path}{sep}undefined symbol: {sym}"),
                    torch_side,
                ));
            }
            for sym in cuda_symbols {
                cases.push((
                    format!("ImportError: {path}{sep}undefined symbol: {sym}"),
                    cuda_side,
                ));
            }
        }
    }
    check(&kb, &cases);
}

#[test]
fn a_cpu_build_of_torch_is_named_in_every_version_form() {
    // A '+cpu' local version is the CPU-only wheel, whatever prints it (pip, a banner, a
    // version check); the CUDA device the code asks for is then refused.
    let kb = Kb::open().unwrap();
    let cpu_wheel: &[&str] = &["cpu_only_wheel"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for form in [
        "torch 2.1.0+cpu",
        "torch==2.1.0+cpu",
        "torch-2.1.0+cpu",
        "Torch version: 2.5.1+cpu",
        "PyTorch: 2.3.1+cpu",
        "torch v2.0.1+cpu",
    ] {
        for error in [
            "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available",
            "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
        ] {
            cases.push((format!("{form}\n{error}"), cpu_wheel));
        }
    }
    check(&kb, &cases);
}

#[test]
fn a_missing_kernel_on_a_gpu_the_paste_names_follows_the_gpus_age() {
    // The same missing-kernel error means a build that dropped the GPU when the paste names a
    // Kepler, Maxwell, Pascal or Volta card, and a build older than the GPU for a Blackwell
    // card; a card every current build carries (Ampere, Ada) is never called dropped.
    let kb = Kb::open().unwrap();
    let map = kb.category_map().unwrap();
    let errors = [
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device",
        "CUDA error: no kernel image is available for execution on the device (cudaErrorNoKernelImageForDevice)",
    ];
    let dropped: &[&str] = &["gpu_arch_dropped"];
    let newer: &[&str] = &["arch_mismatch_wheel"];
    let mut cases: Vec<(String, &[&str])> = Vec::new();
    for gpu in [
        "Tesla K80",
        "Tesla K40m",
        "NVIDIA GeForce GTX 780 Ti",
        "NVIDIA GeForce GTX 970",
        "NVIDIA GeForce GTX 1080 Ti",
        "NVIDIA GeForce GTX 1060",
        "Tesla P100-PCIE-16GB",
        "Tesla V100-SXM2-32GB",
        "NVIDIA TITAN V",
    ] {
        for (i, e) in errors.iter().enumerate() {
            let text = if i % 2 == 0 {
                format!("GPU 0: {gpu}\n{e}")
            } else {
                format!("{e}\nDevice: cuda:0 {gpu}")
            };
            cases.push((text, dropped));
        }
    }
    for gpu in ["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5070 Ti"] {
        for e in errors {
            cases.push((format!("GPU 0: {gpu}\n{e}"), newer));
        }
    }
    check(&kb, &cases);
    for gpu in [
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4090",
        "NVIDIA A100-SXM4-80GB",
    ] {
        for e in errors {
            let text = format!("GPU 0: {gpu}\n{e}");
            let got = first_cause(&kb, &text);
            assert!(
                got.as_deref()
                    .is_some_and(|g| !map.same_cause("gpu_arch_dropped", g)),
                "{text}: {got:?}"
            );
        }
    }
}

/// ONNX Runtime reports a kernel that has no image for the GPU in its own words (a node's
/// `Non-zero status code returned while running … node`, from Python, C++ or the Rust `ort`
/// binding's log target): the code that failed is ONNX Runtime's build, not a torch wheel.
#[test]
fn a_kernel_image_error_onnx_runtime_reports_in_its_own_words_is_not_the_torch_build() {
    let kb = Kb::open().unwrap();
    let status = "Non-zero status code returned while running {op} node. Name:'{op}_12' Status Message: CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device";
    for form in [
        "{status}",
        "2026-03-02T09:14:55.201Z ERROR ort::logging: {status}",
        "terminate called after throwing an instance of 'Ort::Exception'\n  what():  {status}",
        "2025-11-20 10:01:12.448 [E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] {status}",
    ] {
        for op in ["Conv", "Gemm", "Clip"] {
            let text = form.replace("{status}", &status.replace("{op}", op));
            let got = first_cause(&kb, &text);
            assert_ne!(got.as_deref(), Some("arch_mismatch_wheel"), "{text}");
            assert!(
                top3_causes(&kb, &text)
                    .iter()
                    .any(|c| c == "arch_mismatch_prebuilt"),
                "{text}"
            );
        }
    }
}
