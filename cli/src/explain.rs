//! `gpukb explain CODE...`: what an error code means (every library when a number is
//! ambiguous), its exact message, its source, and the curated diagnoses that explain it.

use std::io::Write;
use std::process::ExitCode;

use gpukb_kb::Kb;

/// Arguments of `gpukb explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Codes: `209`, `CUDA_ERROR_SYSTEM_NOT_READY`, `cudaErrorNoKernelImageForDevice`,
    /// `xid 79`, `nccl 2`, `cudnn:3000`.
    #[arg(required = true)]
    pub code: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

const PREFIXES: &[&str] = &["xid", "nccl", "cuda", "cudart", "nvml", "cublas", "cudnn"];

/// Joins `xid 79` written as two arguments into one code.
fn codes(args: &[String]) -> Vec<String> {
    let words: Vec<&str> = args.iter().flat_map(|a| a.split_whitespace()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].trim_end_matches(':');
        if PREFIXES.contains(&w.to_ascii_lowercase().as_str())
            && words.get(i + 1).is_some_and(|n| n.parse::<i64>().is_ok())
        {
            out.push(format!("{w} {}", words[i + 1]));
            i += 2;
        } else {
            out.push(words[i].to_string());
            i += 1;
        }
    }
    out
}

/// Runs `gpukb explain`: exit 0 when every code was found, 1 otherwise.
pub fn run(args: &ExplainArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let words: usize = args.code.iter().map(|a| a.split_whitespace().count()).sum();
    anyhow::ensure!(
        words > 0,
        "no code given: try `gpukb explain 209`, `gpukb explain CUDA_ERROR_NO_DEVICE` or `gpukb explain xid 79`"
    );
    let joined = args.code.join(" ");
    if words > 3 || joined.contains(": ") {
        anyhow::bail!(
            "{:?} looks like an error message, not a code: try `gpukb search {:?}`",
            joined.chars().take(60).collect::<String>(),
            joined.chars().take(200).collect::<String>()
        );
    }
    let kb = Kb::open()?;
    let mut all_found = true;
    let mut json = Vec::new();
    for code in codes(&args.code) {
        let rows = kb.explain(&code)?;
        all_found &= !rows.is_empty();
        if args.json {
            json.push(serde_json::json!({"code": code, "matches": rows}));
            continue;
        }
        if rows.is_empty() {
            writeln!(out, "{code}: not in the code tables")?;
            continue;
        }
        if rows.len() > 1 {
            writeln!(out, "{code}: {} meanings, one per library", rows.len())?;
        }
        for r in &rows {
            writeln!(out, "\n{} = {}  ({})", r.key, r.name, r.library)?;
            writeln!(out, "  message: {}", r.message)?;
            if !r.description.is_empty() {
                writeln!(out, "  {}", r.description)?;
            }
            for l in &r.linked {
                writeln!(
                    out,
                    "  diagnosis: {} [{}]: {}  (gpukb kb show {})",
                    l.id, l.category, l.title, l.id
                )?;
            }
            writeln!(out, "  source: {} [{}]", r.source, r.verified)?;
        }
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &json)?;
        writeln!(out)?;
    }
    Ok(if all_found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
