//! A machine as a pasted environment report shows it. PyTorch's `collect_env` report and
//! `nvidia-smi`'s table name the torch build, the driver release and the GPUs of the machine
//! the error came from; [`read`] takes those lines out of a paste (a pure parser: text in,
//! facts out) and [`Reported::fingerprint`] writes them as a [`Fingerprint`] in which every
//! fact the report does not show is `Unobservable` ("the pasted report does not show it").
//! A report shows no libraries, kernel modules, environment variables or CUDA extensions, so
//! which checks such a fingerprint may decide is the caller's to say (`gpukb_kb::ruling`).
//!
//! A Jetson's GPU (a Tegra compute capability) leaves the GPU list and the driver unshown:
//! on a Jetson they follow the L4T release, which a report does not show.
//!
//! The torch build's GPU code is not in a report: where PyTorch's build scripts set the arch
//! list of the named build ([`crate::builds::torch_wheels`], Linux wheels), that list stands
//! in for it and its source says so; otherwise it stays unobservable.

use crate::builds::{torch_wheels, Arch, KnownFrom, Release};
use crate::compat::{self, BranchCuda};
use crate::fingerprint::{
    DriverFacts, Fingerprint, HostFacts, LibraryFacts, NvmlFacts, NvmlGpu, Observed, PlatformFacts,
    PythonEnv, PythonEnvKind, Source, TorchInstall, SCHEMA_VERSION,
};
use crate::gpus;
use crate::target::summarize;
use crate::version::{ComputeCapability, CudaVersion, DriverVersion};

/// The most GPUs a report may list (each name is looked up in the GPU table).
const MAX_GPUS: usize = 64;

/// What a pasted report says of a machine; `None`/empty where it says nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reported {
    /// The reports read (`collect_env`, `nvidia-smi`), in the order first seen.
    pub tools: Vec<&'static str>,
    /// The torch build (`2.8.0+cu128`) and the CUDA it was built with (`None`: a CPU build).
    pub torch: Option<(String, Option<CudaVersion>)>,
    /// The driver release.
    pub driver: Option<DriverVersion>,
    /// The highest CUDA the driver runs, as `nvidia-smi` prints it (`CUDA Version: 12.4`).
    pub driver_cuda: Option<CudaVersion>,
    /// The GPUs listed, each with its compute capability from the GPU table; empty when
    /// none was listed or one of them is not in the table (a partial list decides nothing).
    pub gpus: Vec<(String, ComputeCapability)>,
    /// The CPU architecture `collect_env`'s `OS:` line names (`x86_64`), or, without it,
    /// aarch64 for a GPU that comes only beside an Arm CPU (GH200, GB200, GB300, GB10).
    pub cpu_arch: Option<Arch>,
    /// Whether the `OS:` line names Windows or nvidia-smi shows a Windows driver model
    /// (WDDM, TCC).
    pub windows: bool,
}

/// Reads the report lines of `text`; `None` when it holds no `collect_env`, `nvidia-smi` or
/// torch package line this module reads.
pub fn read(text: &str) -> Option<Reported> {
    let mut r = Reported::default();
    let mut listed: Vec<String> = Vec::new();
    let mut smi_listed: Vec<String> = Vec::new();
    let mut in_gpu_list = false;
    let mut cuda_build: Option<Option<CudaVersion>> = None;
    let mut torch_version: Option<String> = None;
    let mut listed_torch: Option<(String, Option<CudaVersion>)> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(v) = line.strip_prefix("GPU models and configuration:") {
            r.note("collect_env");
            in_gpu_list = true;
            if let Some(g) = gpu_item(v.trim()) {
                listed.push(g);
            }
            continue;
        }
        if in_gpu_list {
            if let Some(g) = gpu_item(line) {
                listed.push(g);
                continue;
            }
            in_gpu_list = false;
        }
        if let Some(v) = line.strip_prefix("PyTorch version:") {
            r.note("collect_env");
            let v = v.trim();
            if Release::parse(v).is_some() {
                torch_version = Some(v.to_string());
            }
        } else if let Some(v) = line.strip_prefix("CUDA used to build PyTorch:") {
            r.note("collect_env");
            cuda_build = match v.trim() {
                "None" => Some(None),
                v => v.parse().ok().map(Some),
            };
        } else if let Some(v) = line.strip_prefix("Nvidia driver version:") {
            r.note("collect_env");
            r.driver = r.driver.take().or_else(|| v.trim().parse().ok());
        } else if let Some(v) = line.strip_prefix("OS:") {
            let v = v.trim();
            r.windows |= v.contains("Windows");
            r.cpu_arch = r.cpu_arch.or_else(|| {
                let inner = v.rsplit_once('(')?.1.trim_end_matches(')');
                Arch::parse(inner)
            });
        } else if line.contains("NVIDIA-SMI") && line.contains("Driver Version:") {
            r.note("nvidia-smi");
            let after = |key: &str| {
                line.split_once(key)
                    .and_then(|(_, rest)| rest.split_whitespace().next())
            };
            if let Some(d) = after("Driver Version:").and_then(|d| d.parse().ok()) {
                r.driver = Some(d);
            }
            r.driver_cuda = after("CUDA Version:").and_then(|c| c.parse().ok());
        } else if let Some((g, mode)) = smi_gpu_row(line) {
            // WDDM and TCC are the driver models of Windows' driver; Linux prints On/Off.
            r.windows |= matches!(mode, "WDDM" | "TCC");
            smi_listed.push(g);
        } else if let Some(t) = package_line(line) {
            r.note("package list");
            listed_torch.get_or_insert(t);
        }
    }
    if r.tools.is_empty() {
        return None;
    }
    r.torch = torch_version
        .and_then(|v| {
            let cuda = cuda_build.or_else(|| cuda_of_local_version(&v))?;
            Some((v, cuda))
        })
        .or(listed_torch);
    let names = if listed.is_empty() {
        smi_listed
    } else {
        listed
    };
    // No host has more GPUs than this; a longer list is not a report's.
    if names.len() > MAX_GPUS {
        return Some(r);
    }
    let resolved: Option<Vec<(String, ComputeCapability)>> = names
        .iter()
        .map(|n| {
            gpus::resolve(n)
                .ok()
                .filter(|g| g.in_table)
                .map(|g| (n.clone(), g.cc))
        })
        .collect();
    r.gpus = resolved.unwrap_or_default();
    if r.cpu_arch.is_none() && r.gpus.iter().any(|(n, _)| on_grace(n)) {
        r.cpu_arch = Some(Arch::Aarch64);
    }
    // A Jetson's GPU, driver and CUDA follow its L4T release, which a report does not show:
    // judged as a desktop's they would mislead, so neither is taken.
    if r.gpus.iter().any(|(_, cc)| compat::is_tegra(cc.pair())) {
        r.gpus.clear();
        r.driver = None;
        r.driver_cuda = None;
    }
    Some(r)
}

/// Whether a GPU comes only beside NVIDIA's Grace CPU (Arm Neoverse V2) or, in DGX Spark's
/// GB10, an Arm CPU of the same package: GH200, GB200, GB300 and GB10 hosts run aarch64
/// Linux, so their torch builds are the aarch64 (SBSA) wheels.
/// Sources: <https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/>,
/// <https://www.nvidia.com/en-us/data-center/gb200-nvl72/>,
/// <https://www.nvidia.com/en-us/products/workstations/dgx-spark/>.
fn on_grace(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["GH200", "GB200", "GB300", "GB10"].iter().any(|g| {
        upper
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == *g)
    }) || upper.contains("DGX SPARK")
}

impl Reported {
    fn note(&mut self, tool: &'static str) {
        if !self.tools.contains(&tool) {
            self.tools.push(tool);
        }
    }

    /// What the report shows of the machine, in words (`the driver release and the GPUs`).
    pub fn shows(&self) -> String {
        let mut parts = Vec::new();
        if self.driver.is_some() {
            parts.push("the driver release");
        }
        if !self.gpus.is_empty() {
            parts.push("the GPUs");
        }
        if self.torch.is_some() {
            parts.push("the torch build");
        }
        match parts.split_last() {
            None => "nothing gpukb judges".into(),
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// The reports, in words (`collect_env and nvidia-smi`).
    pub fn describe(&self) -> String {
        let s = if self.tools.len() > 1 { "s" } else { "" };
        format!("the pasted {} report{s}", self.tools.join(" and "))
    }

    /// The machine as a fingerprint: what the report shows as found, every other fact
    /// unobservable.
    pub fn fingerprint(&self) -> Fingerprint {
        let what = self.describe();
        let src = Source::Derived { from: what.clone() };
        let unseen = || Unseen(&src, &what);
        let driver_version = match &self.driver {
            Some(d) => Observed::found(d.clone(), src.clone()),
            None => unseen().get(),
        };
        Fingerprint {
            schema: SCHEMA_VERSION,
            host: HostFacts {
                os: unseen().get(),
                kernel: unseen().get(),
                arch: match self.cpu_arch {
                    Some(a) => Observed::found(a.as_str().to_string(), src.clone()),
                    None => unseen().get(),
                },
                glibc: unseen().get(),
                container: unseen().get(),
                wsl: unseen().get(),
                virtualization: unseen().get(),
                secure_boot: unseen().get(),
            },
            driver: DriverFacts {
                version: driver_version,
                flavor: unseen().get(),
                modules: unseen().get(),
                device_nodes: unseen().get(),
                libcuda: unseen().get(),
                libnvidia_ml: unseen().get(),
                installed_modules: unseen().get(),
            },
            nvml: self.nvml(&src).unwrap_or_else(|| unseen().get()),
            cuda: unseen().get(),
            libraries: LibraryFacts {
                files: Vec::new(),
                toolkits: Vec::new(),
                conflicts: Vec::new(),
                problems: Vec::new(),
            },
            python: self.python(&what).into_iter().collect(),
            jetson: unseen().get(),
            env: Vec::new(),
            pci: unseen().get(),
            kernel_log: unseen().get(),
            platform: PlatformFacts {
                wsl: unseen().get(),
                driver_mounts: unseen().get(),
            },
        }
    }

    /// The GPU list as NVML would give it (nvidia-smi prints NVML's answer; collect_env
    /// runs nvidia-smi): only with the driver release and a whole list.
    fn nvml(&self, src: &Source) -> Option<Observed<NvmlFacts>> {
        let driver = self.driver.clone()?;
        if self.gpus.is_empty() {
            return None;
        }
        let cuda = self
            .driver_cuda
            .or(match compat::branch_cuda(driver.branch()) {
                BranchCuda::Known(v) => Some(v),
                BranchCuda::NewerThanData { .. } => compat::BRANCH_CUDA
                    .last()
                    .map(|(_, (a, b))| CudaVersion::new(*a, *b)),
                BranchCuda::OlderThanData => None,
            })?;
        let gpus = self
            .gpus
            .iter()
            .enumerate()
            .map(|(i, (name, cc))| NvmlGpu {
                index: i as u32,
                name: name.clone(),
                compute_capability: Some(*cc),
                ..NvmlGpu::default()
            })
            .collect();
        Some(Observed::found(
            NvmlFacts {
                driver_version: driver,
                cuda_driver_version: cuda,
                gpus,
            },
            src.clone(),
        ))
    }

    /// One environment holding the reported torch build.
    fn python(&self, what: &str) -> Option<PythonEnv> {
        let (version, cuda) = self.torch.clone()?;
        let kernels = match self.arch_list(&version, cuda) {
            Some((images, from)) => Observed::found(summarize(&images), Source::Derived { from }),
            None => Observed::unobservable(
                Source::Derived {
                    from: what.to_string(),
                },
                "a report does not show torch's GPU code, and no arch list is recorded for this build",
            ),
        };
        Some(PythonEnv {
            site_packages: format!("the torch of {what}"),
            kind: PythonEnvKind::System,
            python: None,
            torch: Some(TorchInstall {
                version,
                cuda,
                git_version: None,
                source: Source::Derived {
                    from: what.to_string(),
                },
                kernels,
                loads: Vec::new(),
                pin_mismatches: Vec::new(),
            }),
            nvidia_wheels: Vec::new(),
            cuda_packages: Vec::new(),
            extensions: Vec::new(),
            frameworks: Vec::new(),
        })
    }

    /// The arch list PyTorch's build scripts set for the named Linux build (or the one read
    /// from its wheel), with its source in words.
    fn arch_list(
        &self,
        version: &str,
        cuda: Option<CudaVersion>,
    ) -> Option<(Vec<crate::target::FatbinImage>, String)> {
        if self.windows {
            return None;
        }
        let release = Release::parse(version)?;
        let variant = version.split_once('+')?.1;
        // Without collect_env's `OS:` line (an nvidia-smi table and a pip freeze) the machine is
        // taken for x86-64 Linux: the build scripts' list of that wheel stands in, as its source says.
        let arch = self.cpu_arch.unwrap_or(Arch::X86_64);
        let w = torch_wheels().iter().find(|w| {
            w.release == release && w.variant == variant && w.arch == arch && w.cuda == cuda
        })?;
        let how = match w.known_from() {
            KnownFrom::WheelRead => "read from the wheel",
            KnownFrom::BuildScript => "set by PyTorch's build scripts",
            _ => return None,
        };
        Some((
            w.images()?,
            format!(
                "the arch list of torch {version} ({}), {how}: {}",
                arch.as_str(),
                w.source
            ),
        ))
    }
}

/// A fact the report does not show, of any type.
struct Unseen<'a>(&'a Source, &'a str);

impl Unseen<'_> {
    fn get<T>(&self) -> Observed<T> {
        Observed::unobservable(self.0.clone(), format!("{} does not show it", self.1))
    }
}

/// `GPU 0: NVIDIA GeForce RTX 4090` (or `NVIDIA GeForce RTX 4090` alone) → the name.
fn gpu_item(s: &str) -> Option<String> {
    let name = match s.strip_prefix("GPU ") {
        Some(rest) => rest.split_once(':')?.1.trim(),
        None if s.starts_with("NVIDIA ")
            || s.starts_with("Tesla ")
            || s.starts_with("GeForce ") =>
        {
            s
        }
        None => return None,
    };
    let name = name.split(" (UUID").next().unwrap_or(name).trim();
    (!name.is_empty() && name != "Could not collect").then(|| name.to_string())
}

/// An `nvidia-smi` table row: `|   0  NVIDIA GeForce RTX 4090      Off |   00000000:01:00.0 …`,
/// as the GPU's name and the column after it (persistence mode on Linux, the driver model on
/// Windows).
fn smi_gpu_row(line: &str) -> Option<(String, &str)> {
    let first = line.strip_prefix('|')?.split('|').next()?;
    let mut words = first.split_whitespace();
    words.next()?.parse::<u32>().ok()?;
    let rest: Vec<&str> = words.collect();
    let (mode, name) = rest.split_last()?;
    if !matches!(*mode, "On" | "Off" | "WDDM" | "TCC") || name.is_empty() {
        return None;
    }
    let name = name.join(" ");
    (!name.ends_with("...")).then_some((name, *mode))
}

/// A torch line of `pip freeze` (`torch==2.8.0+cu128`), `pip list` (`torch  2.8.0+cu128`) or
/// `conda list` (`pytorch  2.5.1  py3.11_cuda12.4_cudnn9.1.0_0  pytorch`) that names its
/// build: a version without a local part (`torch==2.8.0`) does not say which CUDA it has.
fn package_line(line: &str) -> Option<(String, Option<CudaVersion>)> {
    if let Some(v) = line.strip_prefix("torch==") {
        let v = v.trim();
        return Some((v.to_string(), cuda_of_local_version(v)?));
    }
    let mut words = line.split_whitespace();
    let (name, version) = (words.next()?, words.next()?);
    Release::parse(version)?;
    match name {
        "torch" if words.next().is_none() => {
            Some((version.to_string(), cuda_of_local_version(version)?))
        }
        "pytorch" => {
            let build = words.next()?;
            let cuda = match build.split('_').find_map(|p| p.strip_prefix("cuda")) {
                Some(c) => Some(c.parse().ok()?),
                None if build.starts_with("cpu") || build.contains("_cpu") => None,
                None => return None,
            };
            Some((version.to_string(), cuda))
        }
        _ => None,
    }
}

/// `2.8.0+cu128` → 12.8; `2.5.1+cpu` → a CPU build; no local part → not said.
fn cuda_of_local_version(v: &str) -> Option<Option<CudaVersion>> {
    let local = v.split_once('+')?.1;
    if local == "cpu" {
        return Some(None);
    }
    let digits = local.strip_prefix("cu")?;
    // cu92 … cu130: two or three digits, the last one the minor release.
    if !(2..=3).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(Some(CudaVersion::new(
        major.parse().ok()?,
        minor.parse().ok()?,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200_COLLECT_ENV: &str =
        include_str!("../../../kb/tests/env_reports/collect_env-h200.txt");
    const H200_SMI: &str = include_str!("../../../kb/tests/env_reports/nvidia-smi-h200.txt");

    #[test]
    fn the_h200_reports_name_its_torch_driver_and_gpu() {
        let r = read(H200_COLLECT_ENV).expect("a collect_env report");
        assert_eq!(r.tools, ["collect_env"]);
        let (v, cuda) = r.torch.clone().expect("torch");
        assert!(v.starts_with("2.11"), "{v}");
        assert_eq!(cuda, Some(CudaVersion::new(13, 0)));
        assert_eq!(r.driver.as_ref().map(|d| d.branch()), Some(580));
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].1, ComputeCapability { major: 9, minor: 0 });
        let s = read(H200_SMI).expect("an nvidia-smi table");
        assert_eq!(s.tools, ["nvidia-smi"]);
        assert_eq!(s.driver_cuda.map(|c| c.major), Some(13));
        assert_eq!(s.gpus.len(), 1, "{:?}", s.gpus);
        assert!(s.torch.is_none());
    }

    #[test]
    fn nvidia_smi_shows_windows_by_its_driver_model_and_a_grace_host_by_its_gpu() {
        // The H200's own table, its persistence column as Windows prints a driver model.
        for model in ["WDDM", "TCC"] {
            let t = H200_SMI.replace(
                "NVIDIA H200                    On ",
                &format!("NVIDIA H200                  {model} "),
            );
            let r = read(&format!("{t}\ntorch==2.8.0+cu128\n")).unwrap();
            assert!(r.windows, "{model}");
            let fp = r.fingerprint();
            let kernels = &fp.python[0].torch.as_ref().unwrap().kernels;
            assert!(
                kernels.is_unknown(),
                "{model}: a Windows build's list is not recorded"
            );
        }
        let linux = read(&format!("{H200_SMI}\ntorch==2.8.0+cu128\n")).unwrap();
        assert!(!linux.windows);
        assert_eq!(linux.cpu_arch, None, "no OS line: not shown");
        // The same table on a Grace Hopper host: an aarch64 machine, its wheels' arch list.
        let gh = H200_SMI.replace(
            "NVIDIA H200                    On ",
            "NVIDIA GH200 480GB             On ",
        );
        let r = read(&format!("{gh}\ntorch==2.8.0+cu128\n")).unwrap();
        assert_eq!(r.gpus.len(), 1, "{:?}", r.gpus);
        assert_eq!(r.cpu_arch, Some(Arch::Aarch64));
        let fp = r.fingerprint();
        let kernels = &fp.python[0].torch.as_ref().unwrap().kernels;
        assert!(
            kernels.source().to_string().contains("aarch64"),
            "{:?}",
            kernels.source()
        );
        // collect_env's OS line wins over the inference.
        let with_os = format!("OS: Ubuntu 24.04 LTS (x86_64)\n{gh}");
        assert_eq!(read(&with_os).unwrap().cpu_arch, Some(Arch::X86_64));
    }

    #[test]
    fn a_fingerprint_of_a_report_holds_only_what_it_shows() {
        let r = read(H200_COLLECT_ENV).unwrap();
        let fp = r.fingerprint();
        assert!(fp.nvml.is_found());
        assert!(fp.driver.version.is_found());
        assert!(fp.driver.modules.is_unknown());
        assert!(fp.pci.is_unknown());
        assert!(fp.cuda.is_unknown());
        let t = fp.python[0].torch.as_ref().unwrap();
        assert_eq!(t.cuda, Some(CudaVersion::new(13, 0)));
        assert!(fp.python[0].extensions.is_empty());
    }

    #[test]
    fn a_cpu_build_a_gpu_not_in_the_table_and_a_truncated_name() {
        let r = read(
            "PyTorch version: 2.5.1+cpu\nCUDA used to build PyTorch: None\nNvidia driver version: 550.54.14\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1080\nGPU 1: NVIDIA Imaginary 9999\n",
        )
        .unwrap();
        assert_eq!(r.torch, Some(("2.5.1+cpu".into(), None)));
        assert!(r.gpus.is_empty(), "one GPU unknown: no list at all");
        let t = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n|   0  NVIDIA GeForce RTX 3080 Ti Lap...  Off | 00000000:01:00.0 Off |                  N/A |\n";
        let s = read(t).unwrap();
        assert!(s.gpus.is_empty(), "{:?}", s.gpus);
        assert_eq!(s.driver.map(|d| d.branch()), Some(535));
    }

    #[test]
    fn the_cuda_of_a_local_version() {
        assert_eq!(
            cuda_of_local_version("2.8.0+cu128"),
            Some(Some(CudaVersion::new(12, 8)))
        );
        assert_eq!(
            cuda_of_local_version("1.13.1+cu117"),
            Some(Some(CudaVersion::new(11, 7)))
        );
        assert_eq!(cuda_of_local_version("2.5.1+cpu"), Some(None));
        assert_eq!(
            cuda_of_local_version("1.4.0+cu92"),
            Some(Some(CudaVersion::new(9, 2)))
        );
        assert_eq!(cuda_of_local_version("2.5.1+cu4294967295"), None);
        assert_eq!(cuda_of_local_version("2.5.1+rocm6.2"), None);
        assert_eq!(cuda_of_local_version("2.5.1"), None);
    }

    #[test]
    fn package_lists_name_the_torch_build() {
        let freeze = read("numpy==2.1.0\ntorch==2.8.0+cu128\ntriton==3.4.0\n").unwrap();
        assert_eq!(
            freeze.torch,
            Some(("2.8.0+cu128".into(), Some(CudaVersion::new(12, 8))))
        );
        let list =
            read("Package    Version\n---------- -----------\ntorch      2.5.1+cpu\n").unwrap();
        assert_eq!(list.torch, Some(("2.5.1+cpu".into(), None)));
        let conda = read(
            "pytorch                   2.5.1           py3.11_cuda12.4_cudnn9.1.0_0    pytorch\n",
        )
        .unwrap();
        assert_eq!(
            conda.torch,
            Some(("2.5.1".into(), Some(CudaVersion::new(12, 4))))
        );
        assert!(
            read("torch==2.8.0\n").is_none(),
            "no local part: the build is not named"
        );
        assert!(read("torch 2.8.0 is great\n").is_none());
    }

    #[test]
    fn a_list_longer_than_any_host_is_no_gpu_list() {
        let mut t =
            String::from("Nvidia driver version: 580.159.04\nGPU models and configuration:\n");
        for i in 0..100_000 {
            t.push_str(&format!("GPU {i}: NVIDIA H200\n"));
        }
        let r = read(&t).unwrap();
        assert!(r.gpus.is_empty());
        assert!(r.driver.is_some());
    }

    #[test]
    fn a_jetson_report_shows_no_gpu_or_driver_to_judge() {
        let t = "| NVIDIA-SMI 540.4.0          Driver Version: 540.4.0      CUDA Version: 12.6     |\n|   0  Orin (nvgpu)                  N/A  | N/A              N/A |                  N/A |\nPyTorch version: 2.5.0a0+872d972e41.nv24.08\nCUDA used to build PyTorch: 12.6\nGPU models and configuration: GPU 0: Orin (nvgpu)\nNvidia driver version: 540.4.0\n";
        let r = read(t).unwrap();
        assert!(r.gpus.is_empty() && r.driver.is_none() && r.driver_cuda.is_none());
        assert_eq!(r.torch.map(|t| t.1), Some(Some(CudaVersion::new(12, 6))));
    }

    #[test]
    fn prose_is_no_report() {
        assert!(read("the quick brown fox\nGPU 0 fell off the bus").is_none());
    }
}
