//! Collectors: read the machine through the [`Host`] seam and fill a
//! [`Fingerprint`]. Independent sources run concurrently, each on its own
//! thread with its own deadline, so one hung source (a wedged driver, a stuck
//! `nvidia-smi`) never delays the others beyond its deadline.

mod cuda;
pub mod cuda_process;
mod driver;
mod jetson;
mod kernel_log;
mod libraries;
mod nvml;
mod pci;
mod platform;
mod python;
mod system;

use crate::fingerprint::*;
use crate::host::{with_deadline, Host, HostError};
use crate::parse::ld_cache::CacheEntry;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use kernel_log::{boot_id, parse_journal_json, read_journal};
pub use libraries::{family_of, FAMILIES};
pub use pci::shows_no_nvidia_gpu;

/// How long each group of sources may take, and whether to initialise CUDA.
#[derive(Debug, Clone)]
pub struct Settings {
    pub files: Duration,
    pub nvml: Duration,
    pub cuda: Duration,
    /// Call `cuInit` (its exact result and the devices it sees). It costs
    /// about a quarter of a second per GPU; without it the CUDA section
    /// holds only `cuDriverGetVersion`.
    pub cuda_init: bool,
    /// Load the CUDA driver API at all (`cuDriverGetVersion`). Loading libcuda costs tens
    /// of milliseconds; search's default detection skips it and the CUDA section is then
    /// unobservable (NVML still gives the driver's CUDA version).
    pub cuda_api: bool,
    /// Load NVML at all. Search's default detection skips it (sysfs, procfs and
    /// the GPU table give the GPUs and the driver version); the NVML section is
    /// then unobservable and says so.
    pub nvml_api: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            files: Duration::from_secs(10),
            nvml: Duration::from_secs(5),
            cuda: Duration::from_secs(8),
            cuda_init: true,
            cuda_api: true,
            nvml_api: true,
        }
    }
}

/// Shared, lazily read facts several collectors need.
pub(crate) struct Context {
    pub host: Arc<Host>,
    /// How long each source took on its own thread.
    timings: std::sync::Mutex<Vec<CollectorTiming>>,
    ld_cache: OnceLock<Result<Option<Vec<CacheEntry>>, HostError>>,
    loader: OnceLock<(crate::loader::Target, crate::loader::LoaderEnvironment)>,
}

impl Context {
    /// Runs `f` and records how long it took as `what` (a part of a section, for
    /// `gpukb fingerprint --timings`).
    pub(crate) fn timed<T>(&self, what: String, f: impl FnOnce() -> T) -> T {
        let (v, t) = CollectorTiming::of(format!("  {what}"), f);
        self.timings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(t);
        v
    }

    /// The loader model's target and environment for this machine, read once:
    /// its glibc, CPU, layout, `LD_*` variables and `/etc/ld.so.preload`; the
    /// working directory is gpukb's own on the live machine, `/` otherwise.
    pub(crate) fn loader(&self) -> &(crate::loader::Target, crate::loader::LoaderEnvironment) {
        self.loader.get_or_init(|| {
            let glibc = system::glibc(self)
                .value()
                .map(|v| gpukb_facts::compat::release_numbers(v))
                .and_then(|n| Some((*n.first()?, *n.get(1)?)))
                // Unknown: a current glibc (glibc-hwcaps, no legacy subdirectories).
                .unwrap_or((2, 39));
            let cwd = match self.host.mode() {
                crate::host::Mode::Live => std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| "/".into()),
                _ => "/".into(),
            };
            (
                crate::loader::Target::detect(&self.host, glibc),
                crate::loader::LoaderEnvironment::of(&self.host, &cwd),
            )
        })
    }

    /// `/etc/ld.so.cache`, parsed once.
    pub(crate) fn ld_cache(&self) -> &Result<Option<Vec<CacheEntry>>, HostError> {
        self.ld_cache.get_or_init(|| {
            let path = "/etc/ld.so.cache";
            match self.host.read(path)? {
                None => Ok(None),
                Some(bytes) => crate::parse::ld_cache::parse_ld_cache(&bytes)
                    .map(Some)
                    .map_err(|message| HostError::Parse {
                        path: path.into(),
                        message,
                    }),
            }
        })
    }
}

/// How long one source took: wall time on its thread, and that thread's CPU
/// time (user+sys) where the platform gives it (`None` for the total, whose
/// work is spread over threads).
#[derive(Debug, Clone)]
pub struct CollectorTiming {
    pub what: String,
    pub wall: Duration,
    pub cpu: Option<Duration>,
}

impl CollectorTiming {
    fn of<T>(what: String, f: impl FnOnce() -> T) -> (T, CollectorTiming) {
        let (t, c) = (std::time::Instant::now(), thread_cpu());
        let v = f();
        let cpu = match (c, thread_cpu()) {
            (Some(a), Some(b)) => b.checked_sub(a),
            _ => None,
        };
        let wall = t.elapsed();
        (v, CollectorTiming { what, wall, cpu })
    }
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a timespec the call fills.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

fn spawn<T: Send + 'static>(
    ctx: &Arc<Context>,
    what: &str,
    deadline: Duration,
    f: impl FnOnce(&Context) -> T + Send + 'static,
) -> std::thread::JoinHandle<Result<T, HostError>> {
    let ctx = ctx.clone();
    let what = what.to_string();
    std::thread::spawn(move || {
        let name = what.clone();
        with_deadline(&what, deadline, move || {
            let (v, t) = CollectorTiming::of(name, || f(&ctx));
            ctx.timings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(t);
            Ok(Some(v))
        })
        .map(|v| v.expect("Some"))
    })
}

fn join<T>(
    h: std::thread::JoinHandle<Result<T, HostError>>,
    on_fail: impl FnOnce(HostError) -> T,
) -> T {
    match h.join() {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => on_fail(e),
        Err(_) => on_fail(HostError::Library {
            what: "collector".into(),
            message: "panicked".into(),
        }),
    }
}

/// Observes the machine behind `host`.
pub fn fingerprint(host: Arc<Host>, deadlines: &Settings) -> Fingerprint {
    fingerprint_timed(host, deadlines).0
}

/// Like [`fingerprint`], also returning how long each source took (its wall
/// and thread CPU time; the last entry is the whole observation's wall time).
pub fn fingerprint_timed(
    host: Arc<Host>,
    deadlines: &Settings,
) -> (Fingerprint, Vec<CollectorTiming>) {
    host.clone()
        .observing(|| observe_all(host, deadlines, None))
}

/// The NVML section alone, under the same deadline as in [`fingerprint`]
/// (`Settings::nvml_api` off: unobservable, as there). With
/// [`fingerprint_with_nvml`] a caller can ask NVML first and let go of it
/// (`nvmlShutdown`, the library unloaded) before the rest is observed: the
/// agent's `--once` does, so that NVML's own memory (about 19 MB on an H200,
/// most of it one block allocated by `nvmlInit`) is not held while the files
/// are read and the diagnosis is made.
pub fn nvml_section(host: Arc<Host>, settings: &Settings) -> Observed<NvmlFacts> {
    let source = || Source::Nvml {
        call: "nvmlInit".into(),
    };
    let dl = settings.nvml;
    let call_nvml = settings.nvml_api;
    match with_deadline("NVML", dl + Duration::from_secs(1), move || {
        Ok(Some(nvml_or_skip(&host, dl, call_nvml)))
    }) {
        Ok(Some(o)) => o,
        Ok(None) => Observed::failed(source(), "no answer"),
        Err(e) => observed_error(source(), e),
    }
}

/// [`fingerprint`] with the NVML section observed before (by
/// [`nvml_section`]); every other source is observed now.
pub fn fingerprint_with_nvml(
    host: Arc<Host>,
    settings: &Settings,
    nvml: Observed<NvmlFacts>,
) -> Fingerprint {
    host.clone()
        .observing(|| observe_all(host, settings, Some(nvml)))
        .0
}

fn nvml_or_skip(host: &Host, deadline: Duration, call_nvml: bool) -> Observed<NvmlFacts> {
    if call_nvml {
        nvml::collect(host, deadline)
    } else {
        Observed::unobservable(
            Source::Nvml {
                call: "nvmlInit".into(),
            },
            "NVML was not loaded (cheap facts only; `gpukb doctor` loads it)",
        )
    }
}

/// A source's answer, being observed on its own thread under its deadline.
type Handle<T> = std::thread::JoinHandle<Result<T, HostError>>;

/// NVML's section: observed by the caller before, or being observed on its thread.
enum Nvml {
    Given(Observed<NvmlFacts>),
    Asked(Handle<Observed<NvmlFacts>>),
}

/// Every source, started by [`start_sources`] and not yet joined.
struct Started {
    sys: Handle<HostFacts>,
    drv: Handle<DriverFacts>,
    nvml: Nvml,
    cuda: Handle<Observed<CudaFacts>>,
    libs: Handle<LibraryFacts>,
    py: Handle<(Vec<PythonEnv>, Vec<LibraryFile>)>,
    jetson: Handle<Observed<gpukb_jetson::JetsonReport>>,
    pci: Handle<Observed<Vec<PciDevice>>>,
    klog: Handle<Observed<KernelLog>>,
    platform: Handle<PlatformFacts>,
}

/// Every source on its own thread under its deadline; NVML's answer is taken
/// from `nvml` when the caller observed it already.
fn observe_all(
    host: Arc<Host>,
    deadlines: &Settings,
    nvml: Option<Observed<NvmlFacts>>,
) -> (Fingerprint, Vec<CollectorTiming>) {
    let t0 = std::time::Instant::now();
    let ctx = Arc::new(Context {
        host,
        ld_cache: OnceLock::new(),
        loader: OnceLock::new(),
        timings: Default::default(),
    });
    let started = start_sources(&ctx, deadlines, nvml);
    let fp = join_sources(&ctx, deadlines, started);
    (fp, timings_with_total(&ctx, t0))
}

/// Starts every source on its own thread under its deadline (NVML only when
/// the caller did not observe it already).
fn start_sources(ctx: &Arc<Context>, d: &Settings, nvml: Option<Observed<NvmlFacts>>) -> Started {
    let sys = spawn(ctx, "host facts", d.files, system::collect);
    let drv = spawn(ctx, "driver files", d.files, driver::collect_files);
    let nvml = match nvml {
        Some(given) => Nvml::Given(given),
        None => {
            let host = ctx.host.clone();
            let (dl, call_nvml) = (d.nvml, d.nvml_api);
            Nvml::Asked(spawn(
                ctx,
                "NVML",
                d.nvml + Duration::from_secs(1),
                move |_| nvml_or_skip(&host, dl, call_nvml),
            ))
        }
    };
    let cuda = spawn_cuda(ctx, d);
    Started {
        sys,
        drv,
        nvml,
        cuda,
        libs: spawn(ctx, "CUDA libraries", d.files, libraries::collect),
        py: spawn(ctx, "Python environments", d.files, python::collect),
        jetson: spawn(ctx, "Jetson files", d.files, jetson::collect),
        pci: spawn(ctx, "PCI devices", d.files, pci::collect),
        klog: spawn(ctx, "kernel log", d.files, kernel_log::collect),
        platform: spawn(ctx, "platform files", d.files, platform::collect),
    }
}

/// Starts the CUDA driver API source, or answers unobservable at once on its
/// thread when `cuda_api` is off.
fn spawn_cuda(ctx: &Arc<Context>, d: &Settings) -> Handle<Observed<CudaFacts>> {
    let host = ctx.host.clone();
    let dl = d.cuda;
    let init = d.cuda_init;
    let call_api = d.cuda_api;
    spawn(
        ctx,
        "CUDA driver API",
        d.cuda + Duration::from_secs(1),
        move |_| {
            if call_api {
                cuda::collect(&host, dl, init)
            } else {
                Observed::unobservable(
                    Source::CudaDriver {
                        call: "cuInit".into(),
                    },
                    "the CUDA driver API was not loaded (cheap facts only; `gpukb doctor` loads it)",
                )
            }
        },
    )
}

/// Waits for every source (a failed or timed-out one becomes its section's
/// failure), reconciles what one source needs from another (driver fallbacks
/// from NVML, wheel libraries, the process's libcuda) and assembles the
/// fingerprint.
fn join_sources(ctx: &Context, d: &Settings, s: Started) -> Fingerprint {
    let host_facts = join(s.sys, |e| system::failed(&e));
    let nvml = match s.nvml {
        Nvml::Given(n) => n,
        Nvml::Asked(h) => join(h, |e| {
            observed_error(
                Source::Nvml {
                    call: "nvmlInit".into(),
                },
                e,
            )
        }),
    };
    let mut cuda = join(s.cuda, |e| {
        observed_error(
            Source::CudaDriver {
                call: "cuInit".into(),
            },
            e,
        )
    });
    let mut drv = join(s.drv, |e| driver::failed(&e));
    driver::fill_fallbacks(ctx, &mut drv, &nvml);
    let libraries = join(s.libs, |e| LibraryFacts {
        files: vec![],
        toolkits: vec![],
        conflicts: vec![],
        problems: vec![format!("library search: {e}")],
    });
    let (python, wheel_libs) = join(s.py, |_| (Vec::new(), Vec::new()));
    let libraries = with_wheel_libraries(libraries, wheel_libs);
    let jetson = join(s.jetson, |e| {
        Observed::failed(
            Source::Derived {
                from: "Jetson files".into(),
            },
            e,
        )
    });
    let pci = join(s.pci, |e| {
        observed_error(
            Source::Listing {
                path: "/sys/bus/pci/devices".into(),
            },
            e,
        )
    });
    let kernel_log = join(s.klog, |e| observed_error(Source::file("/dev/kmsg"), e));
    let platform = join(s.platform, |e| PlatformFacts {
        wsl: Observed::failed(Source::file("/proc/sys/kernel/osrelease"), &e),
        driver_mounts: Observed::failed(Source::file("/proc/self/mountinfo"), e),
    });
    if d.cuda_api {
        let lib = process_libcuda(&python, &drv);
        cuda_process::fill(&ctx.host, d.cuda, &mut cuda, lib);
    }
    Fingerprint {
        schema: SCHEMA_VERSION,
        host: host_facts,
        driver: drv,
        nvml,
        cuda,
        libraries,
        python,
        jetson,
        env: observed_env(&ctx.host),
        pci,
        kernel_log,
        platform,
    }
}

/// The library search's files with the Python wheels' libraries added,
/// deduplicated, and the conflicts among them found again.
fn with_wheel_libraries(mut libraries: LibraryFacts, wheel_libs: Vec<LibraryFile>) -> LibraryFacts {
    libraries.files.extend(wheel_libs);
    libraries.files = libraries::dedupe(std::mem::take(&mut libraries.files));
    libraries.conflicts = libraries::conflicts(&libraries.files);
    libraries
}

/// The registered environment variables that are set, for the fingerprint's
/// `env` (`HOME`, `PATH` and `PYTHONPATH` are read only to find things, not kept).
fn observed_env(host: &Host) -> Vec<EnvVar> {
    host.env()
        .all()
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "HOME" | "PATH" | "PYTHONPATH"))
        .map(|(k, v)| EnvVar {
            name: k.clone(),
            value: v.clone(),
        })
        .collect()
}

/// Each source's timing, in the order they finished, then the whole
/// observation's wall time since `t0` as `total`.
fn timings_with_total(ctx: &Context, t0: std::time::Instant) -> Vec<CollectorTiming> {
    let mut timings = ctx
        .timings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    timings.push(CollectorTiming {
        what: "total".into(),
        wall: t0.elapsed(),
        cpu: None,
    });
    timings
}

/// The real path of the `libcuda.so.1` the user's process loads: the first torch
/// install's (the loader model's answer for it), else the driver search's.
fn process_libcuda(
    python: &[crate::fingerprint::PythonEnv],
    drv: &crate::fingerprint::DriverFacts,
) -> Option<String> {
    let from_torch = python
        .iter()
        .filter_map(|e| e.torch.as_ref())
        .flat_map(|t| t.loads.iter())
        .find(|l| l.soname == "libcuda.so.1")
        .and_then(|l| l.path.clone());
    from_torch.or_else(|| drv.libcuda.value().map(|l| l.real_path.clone()))
}

/// The CUDA driver API section alone (`cuDriverGetVersion`, and `cuInit` when
/// `settings.cuda_init`), under the same deadline as in [`fingerprint`]: for a
/// caller that took the cheap fingerprint (`cuda_api: false`) and finds that
/// NVML could not give the driver's CUDA version, so that only libcuda can.
pub fn cuda_section(host: Arc<Host>, settings: &Settings) -> Observed<CudaFacts> {
    let source = || Source::CudaDriver {
        call: "cuInit".into(),
    };
    let (dl, init) = (settings.cuda, settings.cuda_init);
    match with_deadline("CUDA driver API", dl + Duration::from_secs(1), move || {
        Ok(Some(cuda::collect(&host, dl, init)))
    }) {
        Ok(Some(o)) => o,
        Ok(None) => Observed::absent(source(), "no answer"),
        Err(e) => observed_error(source(), e),
    }
}

/// A seam error as an observation: a question this mode cannot ask (a
/// `--root` directory has no NVML, an older capture never asked it) is
/// unobservable, anything else failed.
pub(crate) fn observed_error<T>(source: Source, e: HostError) -> Observed<T> {
    match e {
        HostError::NotCaptured { .. } | HostError::NotObserved { .. } => {
            Observed::unobservable(source, e.to_string())
        }
        e => Observed::failed(source, e),
    }
}

/// Turns a seam outcome into an observation.
pub(crate) fn observe<T, U>(
    r: Result<Option<T>, HostError>,
    source: Source,
    absent_note: &str,
    f: impl FnOnce(T) -> Result<U, String>,
) -> Observed<U> {
    match r {
        Ok(Some(v)) => match f(v) {
            Ok(u) => Observed::found(u, source),
            Err(e) => Observed::failed(source, e),
        },
        Ok(None) => Observed::absent(source, absent_note),
        Err(e) => observed_error(source, e),
    }
}
