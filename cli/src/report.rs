//! The human-readable fingerprint report: sections, one fact per line, each
//! with its source.

use crate::style::Style;
use gpukb_agent::fingerprint::*;
use std::io::{self, Write};

const W: usize = 16;

fn obs<T>(
    out: &mut dyn Write,
    s: Style,
    label: &str,
    o: &Observed<T>,
    show: impl Fn(&T) -> String,
) -> io::Result<()> {
    match o {
        Observed::Found { value, source } => writeln!(
            out,
            "  {label:<W$}{}  {}",
            show(value),
            s.dim(&format!("[{source}]"))
        ),
        Observed::Absent { source, note } => writeln!(
            out,
            "  {label:<W$}{}  {}",
            s.yellow(&format!("none: {note}")),
            s.dim(&format!("[{source}]"))
        ),
        Observed::Failed { source, error } => writeln!(
            out,
            "  {label:<W$}{}  {}",
            s.red(&format!("could not tell: {error}")),
            s.dim(&format!("[{source}]"))
        ),
        Observed::Unobservable { source, reason } => writeln!(
            out,
            "  {label:<W$}{}  {}",
            s.dim(&format!("not observed: {reason}")),
            s.dim(&format!("[{source}]"))
        ),
    }
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("?".into(), |v| v.to_string())
}

/// One line answering "is this machine's NVIDIA stack there?".
pub fn headline(fp: &Fingerprint) -> String {
    let driver = fp.driver.version.value();
    let gpus: Vec<String> = match (fp.nvml.value(), fp.cuda.value()) {
        (Some(n), _) if !n.gpus.is_empty() => n
            .gpus
            .iter()
            .map(|g| format!("{} (CC {})", g.name, opt(&g.compute_capability)))
            .collect(),
        (_, Some(c)) => c
            .devices
            .iter()
            .map(|d| format!("{} (CC {})", d.name, d.compute_capability))
            .collect(),
        _ => vec![],
    };
    let torch: Vec<String> = fp
        .python
        .iter()
        .filter_map(|e| e.torch.as_ref())
        .map(|t| format!("torch {}", t.version))
        .collect();
    let mut parts = Vec::new();
    if let Some(j) = fp.jetson.value() {
        parts.push(format!(
            "NVIDIA Jetson {} (L4T {}, JetPack {})",
            j.module
                .as_ref()
                .and_then(|m| m.name.clone())
                .or_else(|| j.model.clone())
                .unwrap_or_else(|| "module unknown".into()),
            j.l4t.as_ref().map_or("?".into(), |l| l.version.to_string()),
            j.jetpack.as_ref().map_or("?", |p| p.version.as_str()),
        ));
        parts.extend(torch);
        return parts.join("; ");
    }
    match driver {
        Some(v) => parts.push(format!("NVIDIA driver {v}")),
        None if fp.driver.libcuda.value().is_none() && !fp.driver.version.is_found() => {
            parts.push("No NVIDIA driver on this machine".into())
        }
        None => parts.push("NVIDIA driver version unknown".into()),
    }
    if let Some(n) = fp.nvml.value() {
        parts.push(format!(
            "CUDA {} supported by the driver",
            n.cuda_driver_version
        ));
    } else if let Some(c) = fp.cuda.value() {
        parts.push(format!("CUDA {} supported by the driver", c.driver_version));
    }
    if !gpus.is_empty() {
        parts.push(format!(
            "{} GPU{}: {}",
            gpus.len(),
            if gpus.len() == 1 { "" } else { "s" },
            gpus.join(", ")
        ));
    } else if driver.is_some() {
        parts.push("no GPU visible".into());
    }
    parts.extend(torch);
    parts.join("; ")
}

/// Writes the whole report.
pub fn write_fingerprint(
    out: &mut dyn Write,
    fp: &Fingerprint,
    what: &str,
    s: Style,
) -> io::Result<()> {
    writeln!(out, "{} {}", s.bold("gpukb fingerprint of"), s.bold(what))?;
    writeln!(out, "{}", headline(fp))?;
    host_section(out, s, &fp.host)?;
    driver_section(out, s, &fp.driver)?;
    nvml_section(out, s, &fp.nvml)?;
    cuda_section(out, s, &fp.cuda)?;
    libraries_section(out, s, &fp.libraries)?;
    python_section(out, s, &fp.python)?;
    jetson_section(out, s, &fp.jetson)?;
    env_section(out, s, &fp.env)
}

/// Renders the "Host" section: OS, kernel, architecture, glibc, container, virtualization.
fn host_section(out: &mut dyn Write, s: Style, h: &HostFacts) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("Host"))?;
    let id = |v: &String| v.clone();
    obs(out, s, "OS", &h.os, id)?;
    obs(out, s, "Kernel", &h.kernel, id)?;
    obs(out, s, "Architecture", &h.arch, id)?;
    obs(out, s, "glibc", &h.glibc, id)?;
    obs(out, s, "Container", &h.container, id)?;
    obs(out, s, "WSL", &h.wsl, id)?;
    obs(out, s, "Virtualization", &h.virtualization, id)?;
    obs(out, s, "Secure Boot", &h.secure_boot, |b| {
        if *b {
            "enabled".into()
        } else {
            "disabled".into()
        }
    })
}

/// Renders the "Kernel driver" section: version, module flavor, loaded modules, device nodes, libraries.
fn driver_section(out: &mut dyn Write, s: Style, d: &DriverFacts) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("Kernel driver"))?;
    obs(out, s, "Version", &d.version, |v| v.to_string())?;
    obs(out, s, "Module", &d.flavor, |f| {
        format!("{f} kernel module")
    })?;
    obs(out, s, "Loaded", &d.modules, |m| modules_line(m))?;
    obs(out, s, "Device nodes", &d.device_nodes, |n| {
        if n.is_empty() {
            "none".into()
        } else {
            n.join(" ")
        }
    })?;
    obs(out, s, "libcuda", &d.libcuda, lib_line)?;
    obs(out, s, "libnvidia-ml", &d.libnvidia_ml, lib_line)
}

/// The kernel modules loaded and those not loaded, on one line.
fn modules_line(m: &[ModuleState]) -> String {
    let on: Vec<&str> = m
        .iter()
        .filter(|m| m.loaded)
        .map(|m| m.name.as_str())
        .collect();
    let off: Vec<&str> = m
        .iter()
        .filter(|m| !m.loaded)
        .map(|m| m.name.as_str())
        .collect();
    format!(
        "{}; not loaded: {}",
        if on.is_empty() {
            "none".into()
        } else {
            on.join(", ")
        },
        if off.is_empty() {
            "none".into()
        } else {
            off.join(", ")
        }
    )
}

/// Renders the "NVML" section: the driver NVML reports and each GPU it sees.
fn nvml_section(out: &mut dyn Write, s: Style, nvml: &Observed<NvmlFacts>) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("NVML"))?;
    obs(out, s, "Driver", nvml, |n| {
        format!(
            "{} (supports CUDA {}), {} GPU(s)",
            n.driver_version,
            n.cuda_driver_version,
            n.gpus.len()
        )
    })?;
    if let Some(n) = nvml.value() {
        for g in &n.gpus {
            gpu_lines(out, s, g)?;
        }
    }
    Ok(())
}

/// Renders the "CUDA driver API" section: cuInit's result and each device it lists.
fn cuda_section(out: &mut dyn Write, s: Style, cuda: &Observed<CudaFacts>) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("CUDA driver API"))?;
    obs(out, s, "cuInit", cuda, |c| {
        format!(
            "{} (driver API {}), {} device(s)",
            match &c.init {
                Observed::Found { value, .. } => value.clone(),
                o => format!("not observed ({})", o.why_not().unwrap_or("")),
            },
            c.driver_version,
            c.devices.len()
        )
    })?;
    if let Some(c) = cuda.value() {
        for dev in &c.devices {
            writeln!(
                out,
                "  {:<W$}{} CC {}, {} MiB, {} SMs @ {} MHz, {}-bit memory @ {} MHz, {}{}",
                format!("Device {}", dev.ordinal),
                dev.name,
                dev.compute_capability,
                dev.total_memory_mib,
                dev.multiprocessors,
                dev.clock_mhz,
                dev.memory_bus_bits,
                dev.memory_clock_mhz,
                dev.pci_bus_id,
                if dev.integrated { ", integrated" } else { "" }
            )?;
        }
    }
    Ok(())
}

/// Renders the "CUDA libraries" section: toolkits, library files, conflicts and problems.
fn libraries_section(out: &mut dyn Write, s: Style, libs: &LibraryFacts) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("CUDA libraries"))?;
    for t in &libs.toolkits {
        obs(out, s, "Toolkit", &t.version, |v| {
            format!("{v} at {}{}", t.path, if t.nvcc { " (nvcc)" } else { "" })
        })?;
    }
    if libs.files.is_empty() {
        writeln!(out, "  {}", s.yellow("no CUDA libraries found"))?;
    }
    for f in &libs.files {
        writeln!(
            out,
            "  {:<W$} {:<10} {}  {}",
            f.soname,
            opt(&f.version),
            f.real_path,
            s.dim(&format!("[{}]", f.found_via))
        )?;
    }
    for c in &libs.conflicts {
        writeln!(out, "  {:<W$}{}", s.yellow("Conflict"), c)?;
    }
    for p in &libs.problems {
        writeln!(out, "  {:<W$}{}", s.red("Problem"), p)?;
    }
    Ok(())
}

/// Renders the "Python environments" section: each environment, its torch and its CUDA packages.
fn python_section(out: &mut dyn Write, s: Style, envs: &[PythonEnv]) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("Python environments"))?;
    if envs.is_empty() {
        writeln!(
            out,
            "  {}",
            s.yellow("no environment with torch, nvidia-* wheels or CUDA packages found")
        )?;
    }
    for e in envs {
        writeln!(
            out,
            "  {} {}",
            e.site_packages,
            s.dim(&format!("({}, Python {})", e.kind, opt(&e.python)))
        )?;
        if let Some(t) = &e.torch {
            torch_lines(out, s, t)?;
        }
        let pk = |v: &[Package]| {
            v.iter()
                .map(|p| format!("{} {}", p.name, p.version))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !e.nvidia_wheels.is_empty() {
            writeln!(out, "    {:<14}{}", "nvidia wheels", pk(&e.nvidia_wheels))?;
        }
        if !e.cuda_packages.is_empty() {
            writeln!(out, "    {:<14}{}", "CUDA packages", pk(&e.cuda_packages))?;
        }
    }
    Ok(())
}

/// Renders one environment's torch: version, GPU code it carries, libraries it loads, pin mismatches.
fn torch_lines(out: &mut dyn Write, s: Style, t: &TorchInstall) -> io::Result<()> {
    writeln!(
        out,
        "    {:<14}{} (CUDA {})  {}",
        "torch",
        t.version,
        t.cuda
            .map_or("none: CPU-only build".to_string(), |c| c.to_string()),
        s.dim(&format!("[{}]", t.source))
    )?;
    match &t.kernels {
        Observed::Found { value, source } => {
            writeln!(
                out,
                "    {:<14}SASS {}; PTX {}  {}",
                "GPU code",
                if value.sass.is_empty() {
                    "none".into()
                } else {
                    value.sass.join(" ")
                },
                if value.ptx.is_empty() {
                    "none".into()
                } else {
                    value.ptx.join(" ")
                },
                s.dim(&format!("[{source}]"))
            )?;
        }
        other => {
            let mut buf = Vec::new();
            obs(&mut buf, s, "GPU code", other, |_| String::new())?;
            write!(out, "  {}", String::from_utf8_lossy(&buf))?;
        }
    }
    for l in &t.loads {
        writeln!(
            out,
            "    {:<16} {:<10} {}  {}",
            l.soname,
            opt(&l.version),
            l.path.as_deref().unwrap_or("NOT FOUND"),
            s.dim(&format!("[{}]", l.via))
        )?;
    }
    for m in &t.pin_mismatches {
        writeln!(out, "    {:<14}{}", s.yellow("Pin mismatch"), m)?;
    }
    Ok(())
}

/// Renders the "Jetson" section when the machine is one, or why it could not tell.
fn jetson_section(
    out: &mut dyn Write,
    s: Style,
    jetson: &Observed<gpukb_jetson::JetsonReport>,
) -> io::Result<()> {
    if let Observed::Found { value, .. } = jetson {
        jetson_lines(out, s, value)?;
    } else if let Observed::Failed { error, .. } = jetson {
        writeln!(
            out,
            "\n{}\n  {}",
            s.bold("Jetson"),
            s.red(&format!("could not tell: {error}"))
        )?;
    }
    Ok(())
}

/// Renders the "Environment" section: the CUDA-related variables set.
fn env_section(out: &mut dyn Write, s: Style, env: &[EnvVar]) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("Environment"))?;
    if env.is_empty() {
        writeln!(out, "  {}", s.dim("no CUDA-related variables set"))?;
    }
    for v in env {
        writeln!(out, "  {}={}", v.name, v.value)?;
    }
    Ok(())
}

fn lib_line(l: &LibraryFile) -> String {
    format!(
        "{}{} ({})",
        l.real_path,
        l.version
            .as_ref()
            .map(|v| format!(" = {v}"))
            .unwrap_or_default(),
        l.found_via
    )
}

fn gpu_lines(out: &mut dyn Write, s: Style, g: &NvmlGpu) -> io::Result<()> {
    writeln!(
        out,
        "  {:<W$}{} CC {}, {} MiB, {}, {}",
        format!("GPU {}", g.index),
        g.name,
        opt(&g.compute_capability),
        opt(&g.memory_total_mib),
        opt(&g.pci_bus_id),
        g.uuid
    )?;
    let link = match (
        g.pcie_gen_current,
        g.pcie_width_current,
        g.pcie_gen_max,
        g.pcie_width_max,
    ) {
        (Some(gc), Some(wc), Some(gm), Some(wm)) => {
            let txt = format!("Gen{gc} x{wc} (max Gen{gm} x{wm})");
            if wc < wm || gc < gm {
                s.yellow(&format!("{txt}: below max (idle GPUs drop the generation to save power; check under load)"))
            } else {
                txt
            }
        }
        _ => "unknown".into(),
    };
    writeln!(out, "  {:<W$}{}", "  PCIe", link)?;
    let ecc = match g.ecc_enabled {
        Some(true) => format!(
            "on, {} uncorrected / {} corrected (aggregate)",
            opt(&g.ecc_uncorrected_aggregate),
            opt(&g.ecc_corrected_aggregate)
        ),
        Some(false) => "off".into(),
        None => "not supported".into(),
    };
    writeln!(out, "  {:<W$}{}", "  ECC", ecc)?;
    if let Some(r) = &g.remapped_rows {
        let txt = format!(
            "{} correctable, {} uncorrectable, pending {}, failed {}",
            r.correctable, r.uncorrectable, r.pending, r.failed
        );
        writeln!(
            out,
            "  {:<W$}{}",
            "  Row remapping",
            if r.pending || r.failed {
                s.red(&txt)
            } else {
                txt
            }
        )?;
    }
    if let Some(n) = g.retired_pages_double_bit {
        writeln!(
            out,
            "  {:<W$}{} double-bit retired, pending {}",
            "  Retired pages",
            n,
            opt(&g.retired_pages_pending)
        )?;
    }
    writeln!(
        out,
        "  {:<W$}MIG {}, persistence {}, {} °C, {} W of {} W",
        "  State",
        match g.mig_enabled {
            Some(true) => "on",
            Some(false) => "off",
            None => "n/a",
        },
        match g.persistence_mode {
            Some(true) => "on",
            Some(false) => "off",
            None => "n/a",
        },
        opt(&g.temperature_c),
        g.power_w.map_or("?".into(), |w| format!("{w:.0}")),
        g.power_limit_w.map_or("?".into(), |w| format!("{w:.0}")),
    )?;
    if let Some(t) = &g.throttle_reasons {
        let active: Vec<&String> = t.iter().filter(|r| r.as_str() != "GPU_IDLE").collect();
        if !active.is_empty() {
            writeln!(
                out,
                "  {:<W$}{}",
                "  Throttling",
                s.yellow(
                    &active
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            )?;
        }
    }
    for u in &g.unavailable {
        writeln!(out, "  {:<W$}{}", "  Unavailable", s.dim(u))?;
    }
    Ok(())
}

fn sourced<T: std::fmt::Display>(v: &Option<gpukb_jetson::report::Sourced<T>>) -> String {
    match v {
        Some(x) => format!("{}  [{:?}: {}]", x.value, x.source, x.detail),
        None => "unknown".into(),
    }
}

fn jetson_lines(out: &mut dyn Write, s: Style, j: &gpukb_jetson::JetsonReport) -> io::Result<()> {
    writeln!(out, "\n{}", s.bold("Jetson"))?;
    let module = match &j.module {
        Some(m) => format!(
            "{} ({}{}{})",
            m.name.as_deref().unwrap_or("module not in gpukb's table"),
            m.part_number,
            m.ram_gb.map(|r| format!(", {r} GB")).unwrap_or_default(),
            if m.super_variant { ", Super" } else { "" }
        ),
        None => "unknown".into(),
    };
    writeln!(out, "  {:<W$}{}", "Module", module)?;
    if let Some(m) = &j.model {
        writeln!(
            out,
            "  {:<W$}{}  {}",
            "Model",
            m,
            s.dim("[/proc/device-tree/model]")
        )?;
    }
    if let Some(c) = &j.carrier {
        writeln!(out, "  {:<W$}{}", "Carrier", c)?;
    }
    writeln!(
        out,
        "  {:<W$}{}",
        "SoC",
        j.soc.as_ref().map_or("unknown".into(), |x| format!(
            "{:?}  [{:?}]",
            x.value, x.source
        ))
    )?;
    writeln!(out, "  {:<W$}{}", "GPU CC", sourced(&j.compute_capability))?;
    let l4t = match &j.l4t {
        Some(l) => format!(
            "R{}  [{:?}: {}]{}",
            l.version,
            l.source,
            l.detail,
            if l.in_table {
                ""
            } else {
                " (newer than gpukb's table)"
            }
        ),
        None => "unknown".into(),
    };
    writeln!(out, "  {:<W$}{}", "L4T", l4t)?;
    let jp = match &j.jetpack {
        Some(p) => format!(
            "{}{}  [{:?}: {}]",
            p.version,
            if p.exact { "" } else { " (inferred)" },
            p.source,
            p.detail
        ),
        None => "unknown".into(),
    };
    writeln!(out, "  {:<W$}{}", "JetPack", jp)?;
    writeln!(out, "  {:<W$}{}", "Ubuntu", sourced(&j.ubuntu))?;
    writeln!(out, "  {:<W$}{}", "CUDA", sourced(&j.cuda))?;
    writeln!(out, "  {:<W$}{}", "cuDNN", sourced(&j.cudnn))?;
    writeln!(out, "  {:<W$}{}", "TensorRT", sourced(&j.tensorrt))?;
    if let Some(p) = &j.power_mode {
        writeln!(
            out,
            "  {:<W$}{} {}  [{:?}]",
            "Power mode",
            p.id.map_or("?".into(), |i| i.to_string()),
            p.name.as_deref().unwrap_or(""),
            p.source
        )?;
    }
    writeln!(out, "  {:<W$}{:?}", "jetson_clocks", j.clocks.state)?;
    for d in j.real_disagreements() {
        let vals: Vec<String> = d
            .values
            .iter()
            .map(|v| format!("{} ({:?} {})", v.value, v.source, v.detail))
            .collect();
        writeln!(
            out,
            "  {:<W$}{}: {} — {}",
            s.yellow("Disagreement"),
            d.fact,
            vals.join(" vs "),
            d.explanation
        )?;
    }
    for n in &j.notes {
        writeln!(out, "  {:<W$}{}", "Note", s.dim(n))?;
    }
    Ok(())
}
