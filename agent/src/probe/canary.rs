//! The agent's canary on one CUDA device: `cuInit`, a context, the probe's
//! embedded module (the image the probe would pick for this GPU), a small
//! saxpy through a host→device and a device→host copy, checked on the host.
//! It is the probe's smoke test made small (16 Ki elements) and reuses its
//! loader; it runs in a short-lived process of its own (`gpukb agent`
//! starts one per GPU, with `CUDA_VISIBLE_DEVICES` naming the GPU's UUID),
//! which announces each CUDA call before making it so that the parent can
//! hold every call to a deadline and name the one that hung.

use super::matrix::load_bytes;
use super::{ffi, guard, ProbeError};
use cudarc::driver::{CudaContext, DriverError, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use gpukb_kernels as k;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Elements the canary's saxpy runs over.
pub const ELEMENTS: u32 = 16 << 10;

/// What one canary run found on a device it could use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanaryRun {
    /// The embedded image the driver ran, e.g. `gpukb_probe.sm_90.cubin`.
    pub image: String,
    /// Largest relative error of the copied-back result against the host's.
    pub max_rel_err: f64,
    /// The result matched the host's.
    pub ok: bool,
    /// Milliseconds from `cuInit` to the verified result.
    pub ms: f64,
}

fn drv(call: &'static str) -> impl Fn(DriverError) -> ProbeError {
    move |e| ProbeError::driver(call, e.0 as u32)
}

/// Runs the canary on device `ordinal`. `step` is told the name of each
/// CUDA call before it is made.
pub fn run(ordinal: usize, step: &mut dyn FnMut(&str)) -> Result<CanaryRun, ProbeError> {
    let t0 = Instant::now();
    if !ffi::libcuda_present() {
        return Err(ProbeError::NoLibcuda);
    }
    step("cuInit");
    match guard("cuInit", ffi::init) {
        Ok(()) => {}
        Err(ProbeError::Driver { code: 34, .. }) => return Err(ProbeError::StubLibrary),
        Err(e) => return Err(e),
    }
    step("cuDeviceGetCount");
    let count = guard("cuDeviceGetCount", ffi::device_count)?;
    if ordinal >= count {
        return Err(ProbeError::NoSuchGpu {
            requested: ordinal,
            count,
        });
    }
    step("cuDeviceGetAttribute");
    use cudarc::driver::sys::CUdevice_attribute as A;
    let attr = |a: A| guard("cuDeviceGetAttribute", || ffi::attribute(ordinal, a as i32));
    let cc = (
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?.max(0) as u32,
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?.max(0) as u32,
    );
    let image = k::best_for(cc.0, cc.1)
        .ok_or_else(|| ProbeError::driver("no embedded image for this GPU", 209))?;
    step("cuDevicePrimaryCtxRetain");
    let ctx = guard("cuDevicePrimaryCtxRetain", || {
        CudaContext::new(ordinal).map_err(drv("cuDevicePrimaryCtxRetain"))
    })?;
    let stream = ctx.default_stream();
    step("cuModuleLoadData");
    let module = guard("cuModuleLoadData", || {
        ctx.load_module(Ptx::from_binary(load_bytes(image)))
            .map_err(drv("cuModuleLoadData"))
    })?;
    let saxpy = guard("cuModuleGetFunction", || {
        module
            .load_function(k::KERNEL_SAXPY)
            .map_err(drv("cuModuleGetFunction"))
    })?;
    let n = ELEMENTS as usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 251) as f32 / 251.0 - 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let a = 2.5f32;
    step("cuMemcpyHtoD");
    let (xd, mut yd) = guard("cuMemcpyHtoD", || {
        Ok((
            stream.clone_htod(&x).map_err(drv("cuMemcpyHtoD"))?,
            stream.clone_htod(&y).map_err(drv("cuMemcpyHtoD"))?,
        ))
    })?;
    step("cuLaunchKernel");
    guard("cuLaunchKernel", || {
        let mut b = stream.launch_builder(&saxpy);
        b.arg(&mut yd).arg(&xd).arg(&a).arg(&ELEMENTS);
        // SAFETY: the arguments match gpukb_saxpy(float*, const float*, float, unsigned).
        unsafe { b.launch(LaunchConfig::for_num_elems(ELEMENTS)) }
            .map(|_| ())
            .map_err(drv("cuLaunchKernel"))
    })?;
    step("cuMemcpyDtoH");
    let out = guard("cuMemcpyDtoH", || {
        stream.clone_dtoh(&yd).map_err(drv("cuMemcpyDtoH"))
    })?;
    let max_rel_err = max_rel_err(&x, &y, a, &out);
    Ok(CanaryRun {
        image: image.name.to_string(),
        max_rel_err,
        ok: max_rel_err < 1e-5,
        ms: t0.elapsed().as_secs_f64() * 1e3,
    })
}

/// Largest relative error of `got` against `a*x + y` computed on the host
/// (infinite for a NaN or a short result).
pub fn max_rel_err(x: &[f32], y: &[f32], a: f32, got: &[f32]) -> f64 {
    if got.len() != x.len() || x.len() != y.len() {
        return f64::INFINITY;
    }
    let mut worst = 0f64;
    for i in 0..x.len() {
        let want = f64::from(a) * f64::from(x[i]) + f64::from(y[i]);
        let e = (f64::from(got[i]) - want).abs() / (want.abs() + 1e-3);
        worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_check_catches_a_wrong_or_short_result() {
        let x = [1.0f32, -0.5, 0.25];
        let y = [0.0f32, 1.0, 2.0];
        let right: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
        assert!(max_rel_err(&x, &y, 2.5, &right) < 1e-6);
        let mut wrong = right.clone();
        wrong[1] += 0.01;
        assert!(max_rel_err(&x, &y, 2.5, &wrong) > 1e-3);
        assert!(max_rel_err(&x, &y, 2.5, &right[..2]).is_infinite());
        wrong[0] = f32::NAN;
        assert!(max_rel_err(&x, &y, 2.5, &wrong).is_infinite());
    }

    #[test]
    fn no_libcuda_is_an_error_not_a_panic() {
        if ffi::libcuda_present() {
            return;
        }
        let mut steps = Vec::new();
        let r = run(0, &mut |s| steps.push(s.to_string()));
        assert_eq!(r.unwrap_err(), ProbeError::NoLibcuda);
        assert!(steps.is_empty());
    }
}
