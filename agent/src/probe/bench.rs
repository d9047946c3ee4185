//! Throughput and correctness measurements on one device, through cudarc:
//! the smoke test (saxpy + reduction, checked on the host), device-to-device
//! copy (gpukb's kernel against `cuMemcpyDtoD` in the same run), FP32 FMA
//! rate (against SMs × clock × 2 × lanes), bf16/fp16 GEMM through cuBLAS and
//! cuBLASLt (against the datasheet), pinned host↔device copies (against the
//! PCIe link NVML reports) and peer-to-peer copies. Each stage records its
//! time; a failing stage adds to `errors` and the rest still run.

use super::matrix::load_bytes;
use super::pcie::Nvml;
use super::reference;
use super::{
    ffi, guard, ms_since, GpuProbe, P2pResult, ProbeError, ProbeOptions, Reference, SmokeTest,
    Throughput, Timing,
};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use gpukb_kernels as k;
use std::sync::Arc;
use std::time::Instant;

fn drv(call: &'static str) -> impl Fn(DriverError) -> ProbeError {
    move |e| ProbeError::driver(call, e.0 as u32)
}

fn blas_err(call: &'static str) -> impl Fn(cudarc::cublas::result::CublasError) -> ProbeError {
    move |e| ProbeError::Driver {
        call: call.to_string(),
        code: e.0 as u32,
        name: format!("{:?}", e.0),
    }
}

fn blaslt_err(call: &'static str) -> impl Fn(cudarc::cublaslt::result::CublasError) -> ProbeError {
    move |e| ProbeError::Driver {
        call: call.to_string(),
        code: e.0 as u32,
        name: format!("{:?}", e.0),
    }
}

struct Dev {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    image: &'static k::Image,
}

impl Dev {
    fn func(&self, name: &str) -> Result<CudaFunction, ProbeError> {
        self.module
            .load_function(name)
            .map_err(drv("cuModuleGetFunction"))
    }

    /// Milliseconds the work `f` queues on the stream takes, by events.
    fn time(&self, f: &mut dyn FnMut() -> Result<(), ProbeError>) -> Result<f64, ProbeError> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let a = self.ctx.new_event(flags).map_err(drv("cuEventCreate"))?;
        let b = self.ctx.new_event(flags).map_err(drv("cuEventCreate"))?;
        a.record(&self.stream).map_err(drv("cuEventRecord"))?;
        f()?;
        b.record(&self.stream).map_err(drv("cuEventRecord"))?;
        Ok(f64::from(ffi::elapsed_ms(
            a.cu_event().cast(),
            b.cu_event().cast(),
        )?))
    }

    /// Best (shortest) of `trials` timings of `reps` repetitions of `f`, per repetition.
    fn best(
        &self,
        trials: usize,
        reps: usize,
        f: &mut dyn FnMut() -> Result<(), ProbeError>,
    ) -> Result<f64, ProbeError> {
        let mut best = f64::INFINITY;
        for _ in 0..trials {
            let ms = self.time(&mut || {
                for _ in 0..reps {
                    f()?;
                }
                Ok(())
            })?;
            best = best.min(ms / reps as f64);
        }
        Ok(best)
    }

    fn sync(&self) -> Result<(), ProbeError> {
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }
}

fn open(ordinal: usize, cc: (u32, u32)) -> Result<Dev, ProbeError> {
    let ctx = CudaContext::new(ordinal).map_err(drv("CudaContext::new"))?;
    // One stream: no need for cudarc's per-buffer event tracking.
    // SAFETY: nothing here uses more than one stream per context.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();
    let image = k::best_for(cc.0, cc.1)
        .ok_or_else(|| ProbeError::driver("no embedded image for this GPU", 209))?;
    let module = ctx
        .load_module(Ptx::from_binary(load_bytes(image)))
        .map_err(drv("cuModuleLoadData"))?;
    Ok(Dev {
        ctx,
        stream,
        module,
        image,
    })
}

fn stage<T>(
    g: &mut GpuProbe,
    name: &str,
    f: impl FnOnce(&mut GpuProbe) -> Result<T, ProbeError>,
) -> Option<T> {
    let t = Instant::now();
    let r = guard(name, || f(g));
    g.timings.push(Timing {
        stage: name.to_string(),
        ms: ms_since(t),
    });
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            g.errors.push(format!("{name}: {e}"));
            None
        }
    }
}

/// Runs the smoke test and (unless disabled) every throughput measurement.
pub(super) fn run_gpu(
    g: &mut GpuProbe,
    opts: &ProbeOptions,
    nvml: Option<&Nvml>,
    progress: &mut dyn FnMut(&str),
) {
    let ord = g.ordinal;
    let cc = g.cc;
    let Some(dev) = stage(g, "context", |_| open(ord, cc)) else {
        return;
    };
    progress(&format!("GPU {ord}: smoke test"));
    if let Some(s) = stage(g, "smoke", |_| {
        smoke(&dev, dev.module.clone(), dev.image.name)
    }) {
        g.smoke.push(s);
    }
    // The same kernels JIT-compiled from the low-ISA PTX, when this device can.
    if let Some(low) = k::images().iter().find(|i| {
        i.kind == k::ProbeImageKind::Ptx && i.ptx_isa == Some(k::LOW_PTX_ISA) && i.cc() <= cc
    }) {
        let r = stage(g, "smoke_low_isa_ptx", |_| {
            let m = dev
                .ctx
                .load_module(Ptx::from_binary(load_bytes(low)))
                .map_err(drv("cuModuleLoadData"))?;
            smoke(&dev, m, low.name)
        });
        if let Some(s) = r {
            g.smoke.push(s);
        }
    }
    if opts.no_throughput {
        return;
    }
    let quick = opts.quick;
    progress(&format!("GPU {ord}: memory bandwidth"));
    if let Some(v) = stage(g, "copy", |g| copy(&dev, g, quick)) {
        g.throughput.extend(v);
    }
    progress(&format!("GPU {ord}: FP32 FMA"));
    if let Some(v) = stage(g, "fma", |g| fma(&dev, g, quick)) {
        g.throughput.push(v);
    }
    let bus = g.pci_bus_id.clone();
    let clock = match (nvml, &bus) {
        (Some(n), Some(b)) => n.sm_clock_mhz(b),
        _ => None,
    };
    progress(&format!("GPU {ord}: bf16/fp16 GEMM"));
    if let Some(v) = stage(g, "gemm", |g| gemm(&dev, g, quick)) {
        g.throughput.extend(v);
    }
    if !g.integrated {
        progress(&format!("GPU {ord}: host<->device copies"));
        if let Some(v) = stage(g, "pcie", |g| host_copies(&dev, g, quick, nvml)) {
            g.throughput.extend(v);
        }
    }
    if let Some(p) = g.pcie.as_mut() {
        p.sm_clock_after_fma_mhz = clock;
    } else if clock.is_some() {
        g.pcie = Some(super::PcieLink {
            current_gen: None,
            current_width: None,
            max_gen: None,
            max_width: None,
            sm_clock_after_fma_mhz: clock,
        });
    }
}

fn smoke(dev: &Dev, module: Arc<CudaModule>, image: &str) -> Result<SmokeTest, ProbeError> {
    let n: usize = 1 << 20;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let a = 1.5f32;
    let s = &dev.stream;
    let xd = s.clone_htod(&x).map_err(drv("cuMemcpyHtoD"))?;
    let mut yd = s.clone_htod(&y).map_err(drv("cuMemcpyHtoD"))?;
    let saxpy = module
        .load_function(k::KERNEL_SAXPY)
        .map_err(drv("cuModuleGetFunction"))?;
    let n32 = n as u32;
    let mut b = s.launch_builder(&saxpy);
    b.arg(&mut yd).arg(&xd).arg(&a).arg(&n32);
    // SAFETY: argument list matches gpukb_saxpy(float*, const float*, float, unsigned).
    unsafe { b.launch(LaunchConfig::for_num_elems(n32)) }.map_err(drv("cuLaunchKernel saxpy"))?;
    let out = s.clone_dtoh(&yd).map_err(drv("cuMemcpyDtoH"))?;
    let mut saxpy_err = 0f64;
    for i in 0..n {
        let r = f64::from(a) * f64::from(x[i]) + f64::from(y[i]);
        let e = (f64::from(out[i]) - r).abs() / (r.abs() + 1e-3);
        saxpy_err = saxpy_err.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    let blocks = 256u32;
    let reduce = module
        .load_function(k::KERNEL_REDUCE_SUM)
        .map_err(drv("cuModuleGetFunction"))?;
    let mut part = s
        .alloc_zeros::<f32>(blocks as usize)
        .map_err(drv("cuMemAlloc"))?;
    let mut b = s.launch_builder(&reduce);
    b.arg(&xd).arg(&n32).arg(&mut part);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: matches gpukb_reduce_sum(const float*, unsigned, float*), 256 threads.
    unsafe { b.launch(cfg) }.map_err(drv("cuLaunchKernel reduce_sum"))?;
    let partials = s.clone_dtoh(&part).map_err(drv("cuMemcpyDtoH"))?;
    let got: f64 = partials.iter().map(|&v| f64::from(v)).sum();
    let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let reduce_err = (got - want).abs() / want.abs().max(1.0);
    let passed = saxpy_err < 1e-5 && reduce_err < 1e-4;
    Ok(SmokeTest {
        image: image.to_string(),
        passed,
        saxpy_max_rel_err: saxpy_err,
        reduce_rel_err: if reduce_err.is_nan() {
            f64::INFINITY
        } else {
            reduce_err
        },
        detail: format!("saxpy n={n}, reduce_sum {blocks} blocks: sum {got:.4} vs host {want:.4}"),
    })
}

fn fill_b16(dev: &Dev, buf: &mut CudaSlice<u16>, seed: u32, fp16: bool) -> Result<(), ProbeError> {
    let f = dev.func(k::KERNEL_FILL_B16)?;
    let n = buf.len() as u64;
    let fp = i32::from(fp16);
    let mut b = dev.stream.launch_builder(&f);
    b.arg(buf).arg(&n).arg(&seed).arg(&fp);
    let cfg = LaunchConfig {
        grid_dim: (4096, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: matches gpukb_fill_b16(u16*, u64, unsigned, int).
    unsafe { b.launch(cfg) }.map_err(drv("cuLaunchKernel fill_b16"))?;
    Ok(())
}

fn copy(dev: &Dev, g: &mut GpuProbe, quick: bool) -> Result<Vec<Throughput>, ProbeError> {
    let bytes: usize = if quick { 256 << 20 } else { 1 << 30 };
    let (trials, reps) = if quick { (2, 4) } else { (3, 10) };
    let s = &dev.stream;
    let mut src = s.alloc_zeros::<u16>(bytes / 2).map_err(drv("cuMemAlloc"))?;
    let mut dst = s.alloc_zeros::<u16>(bytes / 2).map_err(drv("cuMemAlloc"))?;
    fill_b16(dev, &mut src, 0x5eed, false)?;
    // Warm up (clocks, first-touch), then the driver's copy.
    s.memcpy_dtod(&src, &mut dst).map_err(drv("cuMemcpyDtoD"))?;
    let memcpy_ms = dev.best(trials, reps, &mut || {
        s.memcpy_dtod(&src, &mut dst).map_err(drv("cuMemcpyDtoD"))
    })?;
    let gbps = |ms: f64| 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
    let memcpy_gbps = gbps(memcpy_ms);

    let n4 = (bytes / 16) as u64;
    let sms = g.sm_count.max(1);
    // Launch shapes (kernel, threads per block, blocks per SM); the best is
    // reported. On the H200 the grid-spread 4-in-flight kernel at 2 blocks of
    // 256 per SM led (4.0 TB/s; tests/fixtures/h200-probe/RESULTS.md lists
    // every shape tried there); fewer, fuller threads beat full occupancy.
    // Quick mode tries only the leaders.
    let shapes: &[(&str, u32, u32)] = if quick {
        &[(k::KERNEL_COPY_V4, 256, 2), (k::KERNEL_COPY_V4_U8, 256, 2)]
    } else {
        &[
            (k::KERNEL_COPY_V4, 256, 2),
            (k::KERNEL_COPY_V4, 256, 1),
            (k::KERNEL_COPY_V4, 512, 1),
            (k::KERNEL_COPY_V4, 128, 4),
            (k::KERNEL_COPY_V4, 256, 3),
            (k::KERNEL_COPY_V4, 256, 4),
            (k::KERNEL_COPY_V4_U8, 256, 1),
            (k::KERNEL_COPY_V4_U8, 256, 2),
            (k::KERNEL_COPY_V4_L2PF, 256, 8),
            (k::KERNEL_COPY_V4_TILE4, 512, 4),
            (k::KERNEL_COPY_V4_SIMPLE, 256, 8),
        ]
    };
    let mut best: Option<(f64, String)> = None;
    let mut tried = Vec::new();
    for &(kernel, threads, per_sm) in shapes {
        let f = dev.func(kernel)?;
        let cfg = LaunchConfig {
            grid_dim: (sms * per_sm, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = || {
            let mut b = s.launch_builder(&f);
            b.arg(&src).arg(&mut dst).arg(&n4);
            // SAFETY: matches gpukb_copy_v4*(const float4*, float4*, u64); buffers hold n4 float4.
            unsafe { b.launch(cfg) }
                .map(|_| ())
                .map_err(drv("cuLaunchKernel copy"))
        };
        launch()?;
        let ms = dev.best(trials, reps, &mut launch)?;
        let v = gbps(ms);
        let shape = format!("{kernel} {}x{threads}", sms * per_sm);
        tried.push(format!("{shape}: {v:.0}"));
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, shape));
        }
    }
    dev.sync()?;
    // Verify the last copy: first and last 64 Ki elements equal.
    let m = 1usize << 16;
    let n = bytes / 2;
    let ok = s.clone_dtoh(&src.slice(..m)).map_err(drv("cuMemcpyDtoH"))?
        == s.clone_dtoh(&dst.slice(..m)).map_err(drv("cuMemcpyDtoH"))?
        && s.clone_dtoh(&src.slice(n - m..))
            .map_err(drv("cuMemcpyDtoH"))?
            == s.clone_dtoh(&dst.slice(n - m..))
                .map_err(drv("cuMemcpyDtoH"))?;
    if !ok {
        g.errors
            .push("copy kernel: destination differs from source".into());
    }
    let (kernel_gbps, shape) = best.unwrap_or((0.0, String::new()));
    let dram = reference::dram_peak_gbps(g.mem_clock_khz, g.mem_bus_bits);
    let dram_src = format!(
        "DRAM peak from the driver: 2 x {} MHz x {}-bit bus",
        g.mem_clock_khz / 1000,
        g.mem_bus_bits
    );
    let kernel = Throughput::new(
        "copy_kernel",
        "device copy, gpukb kernel (read+write)",
        "GB/s",
        kernel_gbps,
        Some(Reference {
            value: memcpy_gbps,
            source: "cuMemcpyDtoD measured in the same run".into(),
            percent: None,
        }),
        80.0,
        format!(
            "{} MiB, best of {trials}x{reps}; best shape {shape}; tried {}{}",
            bytes >> 20,
            tried.join(", "),
            if ok { "; verified" } else { "; WRONG DATA" }
        ),
    )
    .also(dram, &dram_src);
    let memcpy = Throughput::new(
        "copy_memcpy",
        "device copy, cuMemcpyDtoD (read+write)",
        "GB/s",
        memcpy_gbps,
        (dram > 0.0).then(|| Reference {
            value: dram,
            source: dram_src.clone(),
            percent: None,
        }),
        70.0,
        format!("{} MiB, best of {trials}x{reps}", bytes >> 20),
    );
    Ok(vec![kernel, memcpy])
}

fn fma(dev: &Dev, g: &mut GpuProbe, quick: bool) -> Result<Throughput, ProbeError> {
    use cudarc::driver::sys::CUdevice_attribute as A;
    let per_sm = ffi::attribute(
        g.ordinal,
        A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR as i32,
    )
    .unwrap_or(1024)
    .max(256) as u32;
    let threads = 256u32;
    let blocks = g.sm_count.max(1) * (per_sm / threads);
    let total_threads = u64::from(blocks) * u64::from(threads);
    let peak = reference::fp32_peak_tflops(g.cc, g.sm_count, g.clock_khz);
    let target_ms = if quick { 8.0 } else { 25.0 };
    let iters = ((peak.unwrap_or(10.0) * 1e12 * target_ms * 1e-3)
        / (total_threads * k::FMA_FLOP_PER_THREAD_ITER) as f64)
        .clamp(64.0, 1e7) as u32;
    let f = dev.func(k::KERNEL_FMA)?;
    let mut out = dev
        .stream
        .alloc_zeros::<f32>(total_threads as usize)
        .map_err(drv("cuMemAlloc"))?;
    let (b_, c_) = (0.999_999_f32, 1e-7_f32);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = |it: u32| {
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&mut out).arg(&it).arg(&b_).arg(&c_);
        // SAFETY: matches gpukb_fma(float*, unsigned, float, float); out has one slot per thread.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(drv("cuLaunchKernel fma"))
    };
    launch(iters / 2)?;
    let trials = if quick { 2 } else { 3 };
    let ms = dev.best(trials, 1, &mut || launch(iters))?;
    let tflops = (total_threads * u64::from(iters) * k::FMA_FLOP_PER_THREAD_ITER) as f64
        / (ms * 1e-3)
        / 1e12;
    let lanes = reference::fp32_lanes_per_sm(g.cc).unwrap_or(0);
    Ok(Throughput::new(
        "fp32_fma",
        "FP32 FMA",
        "TFLOP/s",
        tflops,
        peak.map(|p| Reference {
            value: p,
            source: format!(
                "{} SMs x {} MHz x 2 x {lanes} FP32 lanes/SM (CUDA Programming Guide throughput table)",
                g.sm_count,
                g.clock_khz / 1000
            ),
            percent: None,
        }),
        80.0,
        format!("{blocks}x{threads} threads, {iters} iterations x 64 FLOP, {ms:.2} ms, best of {trials}"),
    ))
}

/// bf16 and fp16 GEMM through cuBLAS, then bf16 through cuBLASLt when that
/// library loads, each against the datasheet (and a measured baseline where
/// gpukb has one); an output with zeros, NaN or Inf is an error.
fn gemm(dev: &Dev, g: &mut GpuProbe, quick: bool) -> Result<Vec<Throughput>, ProbeError> {
    use cudarc::cublas::{result as blas, sys as bsys};
    // SAFETY: dlopen probe only.
    if !std::panic::catch_unwind(|| unsafe { bsys::is_culib_present() }).unwrap_or(false) {
        return Err(ProbeError::MissingSymbol {
            symbol: "libcublas (not found on the library path)".into(),
        });
    }
    let n: usize = if quick { 4096 } else { 8192 };
    let (trials, reps) = if quick { (1, 3) } else { (2, 5) };
    let flop = 2.0 * (n as f64).powi(3);
    let s = &dev.stream;
    let mut m = GemmOperands {
        a: s.alloc_zeros::<u16>(n * n).map_err(drv("cuMemAlloc"))?,
        b: s.alloc_zeros::<u16>(n * n).map_err(drv("cuMemAlloc"))?,
        c: s.alloc_zeros::<u16>(n * n).map_err(drv("cuMemAlloc"))?,
        n,
    };
    let handle = blas::create_handle().map_err(blas_err("cublasCreate"))?;
    // SAFETY: handle is live; the stream outlives every call below.
    unsafe { blas::set_stream(handle, s.cu_stream() as _) }.map_err(blas_err("cublasSetStream"))?;
    let refs = GemmReferences::of(&g.name);
    let mut results = Vec::new();
    for fp16 in [false, true] {
        fill_b16(dev, &mut m.a, 1, fp16)?;
        fill_b16(dev, &mut m.b, 2, fp16)?;
        let ms = cublas_gemm_ms(dev, handle, &mut m, fp16, trials, reps)?;
        let (key, label) = if fp16 {
            ("gemm_fp16", "fp16 GEMM, cuBLAS")
        } else {
            ("gemm_bf16", "bf16 GEMM, cuBLAS")
        };
        check_gemm_output(dev, g, &m.c, key, fp16)?;
        results.push(refs.throughput(
            key,
            label,
            flop / (ms * 1e-3) / 1e12,
            format!("cublasGemmEx {n}^3, FP32 accumulate, random inputs, {ms:.3} ms, best of {trials}x{reps}"),
        ));
    }
    // SAFETY: handle is live and destroyed once.
    let _ = unsafe { blas::destroy_handle(handle) };

    // SAFETY: dlopen probe only.
    if std::panic::catch_unwind(|| unsafe { cudarc::cublaslt::sys::is_culib_present() })
        .unwrap_or(false)
    {
        fill_b16(dev, &mut m.a, 3, false)?;
        fill_b16(dev, &mut m.b, 4, false)?;
        let r = guard("cublasLt", || {
            lt_bf16(dev, &m.a, &m.b, &mut m.c, n, trials, reps)
        });
        match r {
            Ok((ms, detail)) => {
                check_gemm_output(dev, g, &m.c, "gemm_bf16_lt", false)?;
                results.push(refs.throughput(
                    "gemm_bf16_lt",
                    "bf16 GEMM, cuBLASLt",
                    flop / (ms * 1e-3) / 1e12,
                    detail,
                ));
            }
            Err(e) => g.errors.push(format!("gemm_bf16_lt: {e}")),
        }
    }
    Ok(results)
}

/// The three n x n column-major 16-bit matrices of a GEMM probe, C = A B.
struct GemmOperands {
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    n: usize,
}

/// What a GEMM rate is compared with on this GPU: the datasheet's dense
/// bf16 peak and, where gpukb has one, a measured baseline.
struct GemmReferences {
    datasheet: Option<reference::Datasheet>,
    baseline: Option<(f64, &'static str)>,
}

impl GemmReferences {
    /// The references for the GPU named `name` (as `cuDeviceGetName` gives it).
    fn of(name: &str) -> Self {
        GemmReferences {
            datasheet: reference::tensor_datasheet(name),
            baseline: reference::measured_gemm_baseline(name),
        }
    }

    /// A GEMM rate in TFLOP/s against these references (60% of the datasheet
    /// is expected).
    fn throughput(&self, name: &str, label: &str, tflops: f64, detail: String) -> Throughput {
        let mut t = Throughput::new(
            name,
            label,
            "TFLOP/s",
            tflops,
            self.datasheet.map(|d| Reference {
                value: d.dense_bf16_tflops,
                source: format!("{} (dense = half)", d.source),
                percent: None,
            }),
            60.0,
            detail,
        );
        if let Some((v, src)) = self.baseline {
            t = t.also(v, src);
        }
        t
    }
}

/// Times `cublasGemmEx` of the operands (bf16, or fp16 when `fp16`; FP32
/// accumulate) after one warm-up: ms per product, best of `trials` x `reps`.
fn cublas_gemm_ms(
    dev: &Dev,
    handle: cudarc::cublas::sys::cublasHandle_t,
    m: &mut GemmOperands,
    fp16: bool,
    trials: usize,
    reps: usize,
) -> Result<f64, ProbeError> {
    use cudarc::cublas::{result as blas, sys as bsys};
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let s = &dev.stream;
    let ni = m.n as i32;
    let (one, zero) = (1.0f32, 0.0f32);
    let dtype = if fp16 {
        bsys::cudaDataType_t::CUDA_R_16F
    } else {
        bsys::cudaDataType_t::CUDA_R_16BF
    };
    let (pa, _ra) = m.a.device_ptr(s);
    let (pb, _rb) = m.b.device_ptr(s);
    let (pc, _rc) = m.c.device_ptr_mut(s);
    let mut run = || {
        // SAFETY: n x n column-major matrices of 16-bit elements, all allocated with n*n elements;
        // alpha/beta are f32 as CUBLAS_COMPUTE_32F requires.
        unsafe {
            blas::gemm_ex(
                handle,
                bsys::cublasOperation_t::CUBLAS_OP_N,
                bsys::cublasOperation_t::CUBLAS_OP_N,
                ni,
                ni,
                ni,
                (&one as *const f32).cast(),
                pa as *const _,
                dtype,
                ni,
                pb as *const _,
                dtype,
                ni,
                (&zero as *const f32).cast(),
                pc as *mut _,
                dtype,
                ni,
                bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                bsys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(blas_err("cublasGemmEx"))
    };
    run()?;
    dev.best(trials, reps, &mut run)
}

/// Waits for the GEMM and checks the first 4096 outputs: a zero, NaN or Inf
/// (in bf16, or fp16 when `fp16`) is recorded as an error of `what`.
fn check_gemm_output(
    dev: &Dev,
    g: &mut GpuProbe,
    c: &CudaSlice<u16>,
    what: &str,
    fp16: bool,
) -> Result<(), ProbeError> {
    dev.sync()?;
    let head = dev
        .stream
        .clone_dtoh(&c.slice(..4096))
        .map_err(drv("cuMemcpyDtoH"))?;
    let inf_nan = if fp16 { 0x7c00 } else { 0x7f80 };
    if head
        .iter()
        .any(|&v| v & 0x7fff == 0 || v & inf_nan == inf_nan)
    {
        g.errors
            .push(format!("{what}: output has zeros, NaN or Inf"));
    }
    Ok(())
}

/// bf16 GEMM through cuBLASLt (the path torch.matmul takes), first heuristic
/// algorithm with a 32 MiB workspace. Returns ms per product.
fn lt_bf16(
    dev: &Dev,
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    c: &mut CudaSlice<u16>,
    n: usize,
    trials: usize,
    reps: usize,
) -> Result<(f64, String), ProbeError> {
    use cudarc::cublaslt::{result as lt, sys as lsys};
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let s = &dev.stream;
    let ws_size: usize = 32 << 20;
    let ws = s.alloc_zeros::<u8>(ws_size).map_err(drv("cuMemAlloc"))?;
    let handle = lt::create_handle().map_err(blaslt_err("cublasLtCreate"))?;
    let dt = lsys::cudaDataType_t::CUDA_R_16BF;
    let desc = lt::create_matmul_desc(
        lsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        lsys::cudaDataType_t::CUDA_R_32F,
    )
    .map_err(blaslt_err("cublasLtMatmulDescCreate"))?;
    let lay = lt::create_matrix_layout(dt, n as u64, n as u64, n as i64)
        .map_err(blaslt_err("cublasLtMatrixLayoutCreate"))?;
    let pref = lt::create_matmul_pref().map_err(blaslt_err("cublasLtMatmulPreferenceCreate"))?;
    // SAFETY: pref is live; the attribute is a size_t.
    unsafe {
        lt::set_matmul_pref_attribute(
            pref,
            lsys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            (&ws_size as *const usize).cast(),
            std::mem::size_of::<usize>(),
        )
    }
    .map_err(blaslt_err("cublasLtMatmulPreferenceSetAttribute"))?;
    // SAFETY: all descriptors are live.
    let heur = unsafe { lt::get_matmul_algo_heuristic(handle, desc, lay, lay, lay, lay, pref) }
        .map_err(blaslt_err("cublasLtMatmulAlgoGetHeuristic"))?;
    let (one, zero) = (1.0f32, 0.0f32);
    let (pa, _ra) = a.device_ptr(s);
    let (pb, _rb) = b.device_ptr(s);
    let (pc, _rc) = c.device_ptr_mut(s);
    let (pw, _rw) = ws.device_ptr(s);
    let mut run = || {
        // SAFETY: n x n bf16 matrices, f32 scale, workspace of ws_size bytes, all live.
        unsafe {
            lt::matmul(
                handle,
                desc,
                (&one as *const f32).cast(),
                (&zero as *const f32).cast(),
                pa as *const _,
                lay,
                pb as *const _,
                lay,
                pc as *const _,
                lay,
                pc as *mut _,
                lay,
                &heur.algo,
                pw as *mut _,
                ws_size,
                s.cu_stream() as _,
            )
        }
        .map_err(blaslt_err("cublasLtMatmul"))
    };
    run()?;
    let ms = dev.best(trials, reps, &mut run)?;
    dev.sync()?;
    // SAFETY: each descriptor destroyed once, after the stream finished.
    unsafe {
        let _ = lt::destroy_matmul_pref(pref);
        let _ = lt::destroy_matrix_layout(lay);
        let _ = lt::destroy_matmul_desc(desc);
        let _ = lt::destroy_handle(handle);
    }
    Ok((
        ms,
        format!("cublasLtMatmul {n}^3, first heuristic, 32 MiB workspace, random inputs, {ms:.3} ms, best of {trials}x{reps}"),
    ))
}

fn host_copies(
    dev: &Dev,
    g: &mut GpuProbe,
    quick: bool,
    nvml: Option<&Nvml>,
) -> Result<Vec<Throughput>, ProbeError> {
    let bytes: usize = if quick { 64 << 20 } else { 256 << 20 };
    let (trials, reps) = if quick { (2, 2) } else { (2, 4) };
    // SAFETY: the buffer is written by the first device-to-host copy before any host read.
    let mut host = unsafe { dev.ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
        .map_err(drv("cuMemHostAlloc"))?;
    let mut d = dev
        .stream
        .alloc_zeros::<u8>(bytes)
        .map_err(drv("cuMemAlloc"))?;
    let s = &dev.stream;
    s.memcpy_dtoh(&d, &mut host).map_err(drv("cuMemcpyDtoH"))?;
    s.memcpy_htod(&host, &mut d).map_err(drv("cuMemcpyHtoD"))?;
    let h2d = dev.best(trials, reps, &mut || {
        s.memcpy_htod(&host, &mut d).map_err(drv("cuMemcpyHtoD"))
    })?;
    let d2h = dev.best(trials, reps, &mut || {
        s.memcpy_dtoh(&d, &mut host).map_err(drv("cuMemcpyDtoH"))
    })?;
    dev.sync()?;
    let link = match (nvml, &g.pci_bus_id) {
        (Some(n), Some(b)) => n.link(b),
        _ => None,
    };
    let expected = link.as_ref().and_then(|l| {
        let (gen, width) = (l.max_gen?, l.max_width?);
        Some(Reference {
            value: reference::pcie_link_gbps(gen, width)?,
            source: format!("PCIe Gen{gen} x{width} (NVML max), raw per-direction rate"),
            percent: None,
        })
    });
    let current = link.as_ref().and_then(|l| {
        let (gen, width) = (l.current_gen?, l.current_width?);
        Some((gen, width, reference::pcie_link_gbps(gen, width)?))
    });
    let mut out = Vec::new();
    for (key, label, ms) in [
        ("h2d_pinned", "host to device, pinned", h2d),
        ("d2h_pinned", "device to host, pinned", d2h),
    ] {
        let gbps = bytes as f64 / (ms * 1e-3) / 1e9;
        let mut t = Throughput::new(
            key,
            label,
            "GB/s",
            gbps,
            expected.clone(),
            50.0,
            format!("{} MiB, best of {trials}x{reps}", bytes >> 20),
        );
        if let Some((gen, width, v)) = current {
            t = t.also(
                v,
                &format!(
                    "PCIe Gen{gen} x{width} as trained now (NVML current, read after the copies)"
                ),
            );
        }
        out.push(t);
    }
    g.pcie = link;
    Ok(out)
}

/// Peer-to-peer access and copy bandwidth between every ordered pair.
pub(super) fn p2p(ordinals: &[usize], quick: bool) -> Vec<P2pResult> {
    let mut out = Vec::new();
    for &i in ordinals {
        for &j in ordinals {
            if i == j {
                continue;
            }
            let r = guard("p2p", || p2p_pair(i, j, quick));
            out.push(r.unwrap_or_else(|e| P2pResult {
                from: i,
                to: j,
                can_access: false,
                gbps: None,
                detail: e.to_string(),
            }));
        }
    }
    out
}

fn p2p_pair(i: usize, j: usize, quick: bool) -> Result<P2pResult, ProbeError> {
    let mut can: i32 = 0;
    // SAFETY: out-pointer to a local; CUdevice is the ordinal.
    let rc = unsafe { sys::cuDeviceCanAccessPeer(&mut can, i as i32, j as i32) };
    if rc != sys::CUresult::CUDA_SUCCESS {
        return Err(ProbeError::driver("cuDeviceCanAccessPeer", rc as u32));
    }
    let ci = CudaContext::new(i).map_err(drv("CudaContext::new"))?;
    let cj = CudaContext::new(j).map_err(drv("CudaContext::new"))?;
    // SAFETY: single stream per context.
    unsafe {
        ci.disable_event_tracking();
        cj.disable_event_tracking();
    }
    if can == 1 {
        // Enable access both ways (j reads i's memory and i j's); 704
        // (already enabled, e.g. by the reverse pair) is fine.
        for (cur, peer) in [(&cj, &ci), (&ci, &cj)] {
            cur.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
            // SAFETY: both contexts are live primary contexts of distinct devices.
            let rc = unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) };
            if rc != sys::CUresult::CUDA_SUCCESS
                && rc != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
            {
                return Err(ProbeError::driver("cuCtxEnablePeerAccess", rc as u32));
            }
        }
    }
    let bytes: usize = if quick { 64 << 20 } else { 256 << 20 };
    // Plain cuMemAlloc buffers: cuCtxEnablePeerAccess does not cover
    // stream-ordered (cuMemAllocAsync pool) memory, which cudarc's `alloc`
    // uses, and copies between pool buffers are staged through the host.
    ci.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
    // SAFETY: plain device allocation in context i, freed below.
    let src = unsafe { cudarc::driver::result::malloc_sync(bytes) }.map_err(drv("cuMemAlloc"))?;
    cj.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
    // SAFETY: plain device allocation in context j, freed below.
    let dst = match unsafe { cudarc::driver::result::malloc_sync(bytes) } {
        Ok(d) => d,
        Err(e) => {
            ci.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
            // SAFETY: src was allocated above and is freed once.
            let _ = unsafe { cudarc::driver::result::free_sync(src) };
            return Err(drv("cuMemAlloc")(e));
        }
    };
    let sj = cj.default_stream();
    let copy = || {
        // SAFETY: both buffers hold `bytes` bytes in their own contexts.
        unsafe {
            cudarc::driver::result::memcpy_peer_async(
                cj.cu_ctx(),
                dst,
                ci.cu_ctx(),
                src,
                bytes,
                sj.cu_stream(),
            )
        }
        .map_err(drv("cuMemcpyPeerAsync"))
    };
    let timed = (|| {
        copy()?;
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let a = cj.new_event(flags).map_err(drv("cuEventCreate"))?;
        let b = cj.new_event(flags).map_err(drv("cuEventCreate"))?;
        let reps = if quick { 2 } else { 5 };
        a.record(&sj).map_err(drv("cuEventRecord"))?;
        for _ in 0..reps {
            copy()?;
        }
        b.record(&sj).map_err(drv("cuEventRecord"))?;
        let ms =
            f64::from(ffi::elapsed_ms(a.cu_event().cast(), b.cu_event().cast())?) / reps as f64;
        sj.synchronize().map_err(drv("cuStreamSynchronize"))?;
        Ok::<_, ProbeError>((ms, reps))
    })();
    // SAFETY: the stream finished (or failed); each buffer freed once in its context.
    unsafe {
        let _ = cj.bind_to_thread();
        let _ = cudarc::driver::result::free_sync(dst);
        let _ = ci.bind_to_thread();
        let _ = cudarc::driver::result::free_sync(src);
    }
    let (ms, reps) = timed?;
    Ok(P2pResult {
        from: i,
        to: j,
        can_access: can == 1,
        gbps: Some(bytes as f64 / (ms * 1e-3) / 1e9),
        detail: format!(
            "{} MiB cuMemcpyPeerAsync x{reps}, cuMemAlloc buffers{}",
            bytes >> 20,
            if can == 1 {
                ", peer access enabled"
            } else {
                ", staged through the host (no peer access)"
            }
        ),
    })
}
