//! `gpukb probe`: runs the live GPU probe (`gpukb_agent::probe`) and prints
//! the module-load matrix, framework verdicts and throughput figures, or
//! `--json`. Exit codes: 0 probe ran and nothing is flagged; 1 probe ran and
//! something is flagged (a figure far below its reference, a failed smoke
//! test, a load result the rules did not predict, a failed stage); 2 the
//! probe could not run (no libcuda, no driver, no GPU), with a one-line reason.

use gpukb_agent::probe::{self, FrameworkInput, GpuProbe, ProbeError, ProbeOptions, ProbeReport};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// `gpukb probe` arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProbeArgs {
    /// Print the report as JSON (the capture's probe.json format).
    #[arg(long)]
    pub json: bool,
    /// Shorter measurements (smaller buffers, fewer repetitions).
    #[arg(long)]
    pub quick: bool,
    /// Probe only this CUDA device ordinal.
    #[arg(long, value_name = "N")]
    pub gpu: Option<usize>,
    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub save: Option<std::path::PathBuf>,
    /// A library with GPU code (e.g. .../torch/lib/libtorch_cuda.so) to judge
    /// against each GPU; repeatable.
    #[arg(long, value_name = "PATH")]
    pub fatbin: Vec<String>,
    /// Module-load matrix, smoke test and verdicts only; no throughput runs.
    #[arg(long)]
    pub no_throughput: bool,
}

/// Runs the probe for these arguments. `fp`: a fingerprint of this machine
/// already taken (its torch builds are judged on each GPU); without one the
/// probe takes a quick one itself.
pub fn measure(
    args: &ProbeArgs,
    fp: Option<&gpukb_agent::Fingerprint>,
) -> Result<ProbeReport, ProbeError> {
    let mut frameworks = Vec::new();
    if !args.fatbin.is_empty() {
        let host = gpukb_agent::host::Host::live(Default::default());
        for path in &args.fatbin {
            match host.elf(path) {
                Ok(Some(info)) => match info.fatbin {
                    Some(fb) => frameworks.push(FrameworkInput {
                        name: path.rsplit('/').next().unwrap_or(path).to_string(),
                        path: path.clone(),
                        images: fb.targets.iter().map(|t| t.image).collect(),
                    }),
                    None => eprintln!("gpukb probe: {path} carries no GPU code (no .nv_fatbin)"),
                },
                Ok(None) => eprintln!("gpukb probe: {path}: no such file"),
                Err(e) => eprintln!("gpukb probe: {path}: {e}"),
            }
        }
    }
    if args.fatbin.is_empty() {
        frameworks.extend(match fp {
            Some(fp) => frameworks_of(fp),
            None => installed_frameworks(),
        });
    }
    let opts = ProbeOptions {
        quick: args.quick,
        gpu: args.gpu,
        no_throughput: args.no_throughput,
        frameworks,
    };
    let show = std::io::stderr().is_terminal();
    let mut step = 0usize;
    let mut progress = |line: &str| {
        if show {
            step += 1;
            eprint!("\r\x1b[2K[{step:>2}] {line}");
            let _ = std::io::stderr().flush();
        }
    };
    // cudarc reports a missing library or symbol by panicking; the probe
    // catches those, so keep the default hook from printing them.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = probe::run(&opts, &mut progress);
    std::panic::set_hook(hook);
    if show {
        eprint!("\r\x1b[2K");
    }
    result
}

/// Runs `gpukb probe`.
pub fn run(args: &ProbeArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let result = measure(args, None);
    let report = result.map_err(|e| anyhow::anyhow!("probe: {e}"))?;
    if let Some(path) = &args.save {
        std::fs::write(path, report.to_json() + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        write_human(&report, out)?;
    }
    Ok(if flagged(&report).is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Everything in a report that deserves attention, one line each.
pub fn flagged(r: &ProbeReport) -> Vec<String> {
    let mut v = Vec::new();
    for g in &r.gpus {
        for t in g.throughput.iter().filter(|t| t.far_below) {
            v.push(format!(
                "GPU {}: {} {:.0} {} is {:.0} % of {} (flag below {:.0} %)",
                g.ordinal,
                t.label,
                t.measured,
                t.unit,
                t.percent.unwrap_or(0.0),
                t.expected
                    .as_ref()
                    .map(|e| e.source.as_str())
                    .unwrap_or("?"),
                t.threshold_percent
            ));
        }
        for s in g.smoke.iter().filter(|s| !s.passed) {
            v.push(format!(
                "GPU {}: smoke test from {} FAILED: {}",
                g.ordinal, s.image, s.detail
            ));
        }
        for m in g.module_loads.iter().filter(|m| m.code != m.predicted) {
            v.push(format!(
                "GPU {}: {} loaded with {} but the rules predicted {}",
                g.ordinal, m.image, m.code, m.predicted
            ));
        }
        for e in &g.errors {
            v.push(format!("GPU {}: {e}", g.ordinal));
        }
    }
    v
}

fn result_text(code: u32, name: &str, kind: gpukb_kernels::ProbeImageKind) -> String {
    match (code, kind) {
        (0, gpukb_kernels::ProbeImageKind::Ptx) => "loaded (JIT)".to_string(),
        (0, _) => "loaded".to_string(),
        _ => format!("{code} {name}"),
    }
}

/// The human report.
pub fn write_human(r: &ProbeReport, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "gpukb probe: driver CUDA {} (JITs PTX ISA <= {}.{}), {} device(s), {:.2} s{}",
        probe::verdict::cuda_version_string(r.driver_cuda_version),
        r.driver_max_ptx_isa.0,
        r.driver_max_ptx_isa.1,
        r.device_count,
        r.total_ms / 1e3,
        if r.quick { ", --quick" } else { "" }
    )?;
    for g in &r.gpus {
        writeln!(out)?;
        gpu_heading(g, out)?;
        module_load_matrix(g, out)?;
        smoke_lines(g, out)?;
        framework_verdicts(g, out)?;
        throughput_lines(g, out)?;
        let times: Vec<String> = g
            .timings
            .iter()
            .map(|t| format!("{} {:.0}", t.stage, t.ms))
            .collect();
        writeln!(out, "  Timings (ms): {}", times.join(", "))?;
        for e in &g.errors {
            writeln!(out, "  error: {e}")?;
        }
    }
    for p in &r.p2p {
        writeln!(
            out,
            "P2P {} -> {}: peer access {}, {}",
            p.from,
            p.to,
            if p.can_access { "yes" } else { "no" },
            p.gbps
                .map(|g| format!("{g:.1} GB/s ({})", p.detail))
                .unwrap_or_else(|| p.detail.clone())
        )?;
    }
    let flags = flagged(r);
    if !flags.is_empty() {
        writeln!(out)?;
        writeln!(out, "Flagged:")?;
        for f in flags {
            writeln!(out, "  {f}")?;
        }
    }
    Ok(())
}

/// Renders a GPU's heading: name, compute capability, SMs, clock, memory and PCIe link.
fn gpu_heading(g: &GpuProbe, out: &mut dyn Write) -> std::io::Result<()> {
    let link = g
        .pcie
        .as_ref()
        .and_then(|p| {
            Some(format!(
                ", PCIe Gen{} x{}",
                p.current_gen?, p.current_width?
            ))
        })
        .unwrap_or_default();
    writeln!(
        out,
        "GPU {}: {} (compute capability {}.{}, {} SMs at {} MHz, {:.1} GiB){}",
        g.ordinal,
        g.name,
        g.cc.0,
        g.cc.1,
        g.sm_count,
        g.clock_khz / 1000,
        g.total_mem_bytes as f64 / (1u64 << 30) as f64,
        link
    )
}

/// Renders the module-load matrix: each embedded image's load result against the prediction.
fn module_load_matrix(g: &GpuProbe, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "  Module load matrix (cuModuleLoadDataEx of each embedded image):"
    )?;
    writeln!(
        out,
        "    {:<32} {:<40} {:>9} {:>8}",
        "image", "result", "predicted", "ms"
    )?;
    for m in &g.module_loads {
        let isa = m
            .ptx_isa
            .map(|(a, b)| format!(" ISA {a}.{b}"))
            .unwrap_or_default();
        let label = format!("{} {}{isa}", m.target, m.kind);
        writeln!(
            out,
            "    {:<32} {:<40} {:>6} {} {:>8.2}",
            label,
            result_text(m.code, &m.code_name, m.kind),
            m.predicted,
            if m.code == m.predicted { "ok" } else { "!!" },
            m.ms
        )?;
    }
    writeln!(
        out,
        "    rules {} every load result",
        if g.rules_agree_with_loads {
            "predicted"
        } else {
            "did NOT predict"
        }
    )
}

/// Renders each smoke test's outcome.
fn smoke_lines(g: &GpuProbe, out: &mut dyn Write) -> std::io::Result<()> {
    for s in &g.smoke {
        writeln!(
            out,
            "  Smoke test ({}): {} (saxpy max rel err {:.1e}, reduction rel err {:.1e})",
            s.image,
            if s.passed { "passed" } else { "FAILED" },
            s.saxpy_max_rel_err,
            s.reduce_rel_err
        )?;
    }
    Ok(())
}

/// Renders the verdict on each framework's GPU code: which image runs, or why it fails.
fn framework_verdicts(g: &GpuProbe, out: &mut dyn Write) -> std::io::Result<()> {
    if g.frameworks.is_empty() {
        return Ok(());
    }
    writeln!(out, "  Framework verdicts:")?;
    for f in &g.frameworks {
        let v = &f.verdict;
        writeln!(
            out,
            "    {}: {} ({})",
            f.name,
            match v.outcome {
                probe::ImageOutcome::Sass =>
                    format!("runs {} machine code", v.image.as_deref().unwrap_or("?")),
                probe::ImageOutcome::PtxJit =>
                    format!("JIT-compiles {} PTX", v.image.as_deref().unwrap_or("?")),
                probe::ImageOutcome::PtxTooNew =>
                    "fails: 222 PTX newer than the driver".to_string(),
                probe::ImageOutcome::NoImage =>
                    "fails: 209 no kernel image is available".to_string(),
            },
            v.reason
        )?;
    }
    Ok(())
}

/// Renders each throughput figure against its references.
fn throughput_lines(g: &GpuProbe, out: &mut dyn Write) -> std::io::Result<()> {
    if g.throughput.is_empty() {
        return Ok(());
    }
    writeln!(out, "  Throughput:")?;
    for t in &g.throughput {
        let vs = match (&t.expected, t.percent) {
            (Some(e), Some(p)) => format!("{p:>5.1} % of {:.1} ({})", e.value, e.source),
            _ => "no reference for this model".to_string(),
        };
        writeln!(
            out,
            "    {:<40} {:>9.1} {:<8} {}{}",
            t.label,
            t.measured,
            t.unit,
            vs,
            if t.far_below { "  << FAR BELOW" } else { "" }
        )?;
        for o in &t.other_references {
            writeln!(
                out,
                "    {:<40} {:>9} {:<8} {:>5.1} % of {:.1} ({})",
                "",
                "",
                "",
                o.percent.unwrap_or(0.0),
                o.value,
                o.source
            )?;
        }
    }
    Ok(())
}

/// The one-line message for a probe that could not run (for callers that
/// run the probe themselves).
pub fn error_line(e: &ProbeError) -> String {
    format!("gpukb probe: {e}")
}

/// The torch builds this machine's fingerprint finds, with the GPU code in
/// their `libtorch_cuda.so`, to judge against each GPU.
fn installed_frameworks() -> Vec<FrameworkInput> {
    let host = std::sync::Arc::new(gpukb_agent::host::Host::live(Default::default()));
    let settings = gpukb_agent::Settings {
        cuda_init: false,
        ..Default::default()
    };
    frameworks_of(&gpukb_agent::fingerprint(host, &settings))
}

/// The torch builds of a fingerprint, with their GPU code.
fn frameworks_of(fp: &gpukb_agent::Fingerprint) -> Vec<FrameworkInput> {
    fp.python
        .iter()
        .filter_map(|e| {
            let t = e.torch.as_ref()?;
            let kernels = t.kernels.value()?;
            let path = match t.kernels.source() {
                gpukb_agent::fingerprint::Source::Elf { path } => path.clone(),
                other => other.to_string(),
            };
            Some(FrameworkInput {
                name: format!("torch {} (libtorch_cuda.so)", t.version),
                path,
                images: kernels.targets.iter().map(|t| t.image).collect(),
            })
        })
        .collect()
}
