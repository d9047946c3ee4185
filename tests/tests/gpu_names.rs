//! Every GPU name `gpukb plan` may be handed resolves to a GPU with its
//! compute capability: each name of NVIDIA's supported-gpus.json (the table
//! `agent/facts/data/nvidia_driver_gpus.csv` is generated from), each GPU name
//! recorded in this repository's fingerprints, captures and KB examples (NVML's
//! `nvml.gpus[].name`, CUDA's `devices[].name`, `nvidia-smi -L` and `-q` lines,
//! CUDA device names as ggml logs them, checked against the CC it printed), and
//! the NVML names of the issue-23 quiz (SXM/PCIe/NVL/AC/MIG/laptop variants).
#![allow(clippy::disallowed_methods)] // tests read fixtures

use clap::Parser;
use gpukb_facts::gpus::resolve;
use serde_json::Value;
use std::path::Path;

/// GPU names in a JSON document: `name` of every object in a `gpus` or `devices` array.
fn json_gpu_names(v: &Value, under_gpus: bool, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if under_gpus {
                if let Some(Value::String(n)) = m.get("name") {
                    out.push(n.clone());
                }
            }
            for (k, x) in m {
                let gpus = matches!(k.as_str(), "gpus" | "devices");
                if let Value::Array(a) = x {
                    for e in a {
                        json_gpu_names(e, gpus, out);
                    }
                } else {
                    json_gpu_names(x, false, out);
                }
            }
        }
        Value::Array(a) => {
            for e in a {
                json_gpu_names(e, under_gpus, out);
            }
        }
        _ => {}
    }
}

/// `GPU 0: NVIDIA H100 80GB HBM3 (UUID: …)` lines of `nvidia-smi -L`.
fn smi_names(text: &str, out: &mut Vec<String>) {
    // Pastes stored in JSON strings keep their line breaks escaped.
    let text = text.replace("\\n", "\n");
    let mut prev = "";
    for line in text.lines() {
        // `nvidia-smi -q`: "Product Name : NVIDIA H100 80GB HBM3" (not the vGPU
        // licence's "vGPU Software Licensed Product" block).
        if let Some((k, v)) = line.split_once(':') {
            if k.trim() == "Product Name"
                && !prev.contains("Licensed Product")
                && !v.trim().is_empty()
            {
                out.push(v.trim().to_string());
            }
        }
        prev = line;
        let Some(rest) = line.trim_start().strip_prefix("GPU ") else {
            continue;
        };
        let Some((idx, rest)) = rest.split_once(": ") else {
            continue;
        };
        if !idx.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some((name, _)) = rest.split_once(" (UUID") {
            out.push(name.trim().to_string());
        }
    }
}

/// `Device 0: Orin, compute capability 8.7` (CUDA's device name as ggml logs it): (name, CC).
fn cuda_device_lines(text: &str, out: &mut Vec<(String, String)>) {
    let text = text.replace("\\n", "\n");
    for line in text.lines() {
        let Some(i) = line.find("Device ") else {
            continue;
        };
        let rest = &line[i + "Device ".len()..];
        let Some((idx, rest)) = rest.split_once(": ") else {
            continue;
        };
        if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some((name, cc)) = rest.split_once(", compute capability ") {
            let cc: String = cc
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            out.push((name.trim().to_string(), cc));
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<(String, String)>, with_cc: &mut Vec<(String, String, String)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out, with_cc);
            continue;
        }
        if e.metadata().map_or(true, |m| m.len() > 8 << 20) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let mut names = Vec::new();
        if p.extension().is_some_and(|x| x == "json") {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                json_gpu_names(&v, false, &mut names);
            }
        }
        smi_names(&text, &mut names);
        for n in names {
            out.push((n, p.display().to_string()));
        }
        let mut ccs = Vec::new();
        cuda_device_lines(&text, &mut ccs);
        for (n, cc) in ccs {
            with_cc.push((n, cc, p.display().to_string()));
        }
    }
}

#[test]
fn every_name_of_nvidias_table_resolves() {
    let mut bad = Vec::new();
    let mut n = 0;
    for r in gpukb_facts::driver_choice::driver_gpu_table() {
        if r.nvidia_name.is_empty() {
            continue;
        }
        n += 1;
        match resolve(&r.nvidia_name) {
            Ok(_) => {}
            // GeForce 6/7-era and older: known, and known to predate CUDA.
            Err(e) if e.no_cuda.is_some() => {}
            Err(e) => bad.push(format!("10de:{:04x} {e}", r.device)),
        }
        // The PCI id resolves the same way.
        let id = format!("10de:{:04x}", r.device);
        if let Err(e) = resolve(&id) {
            if e.no_cuda.is_none() {
                bad.push(format!("{id}: {e}"));
            }
        }
    }
    assert!(n > 1000, "{n} names");
    assert!(
        bad.is_empty(),
        "{} unresolved:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_gpu_name_recorded_in_the_fixtures_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut with_cc = Vec::new();
    for d in [
        "tests/fixtures",
        "tests/live",
        "tests/eval",
        "agent/tests",
        "cli/tests",
        "kb/examples",
    ] {
        walk(&root.join(d), &mut found, &mut with_cc);
    }
    // CUDA's own names, with the CC it printed next to them.
    assert!(with_cc.iter().any(|(n, _, _)| n == "Orin"), "{with_cc:?}");
    for (name, cc, file) in &with_cc {
        let r = resolve(name).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(&r.cc.to_string(), cc, "{file}: {name}");
    }
    let distinct: std::collections::BTreeSet<&str> =
        found.iter().map(|(n, _)| n.as_str()).collect();
    assert!(distinct.len() >= 10, "{distinct:?}");
    for (name, file) in &found {
        let r = resolve(name).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(r.in_table, "{file}: {name}: {r:?}");
    }
}

#[test]
fn the_names_nvml_prints_resolve_through_plan() {
    // NVIDIA supported-gpus.json of 590.48.01 (0x3182 "NVIDIA B300 SXM6 AC",
    // GB110; 0x2330 "NVIDIA H100 80GB HBM3", GH100); NVIDIA CUDA GPU Compute
    // Capability page (B300 10.3, H100/GH200 9.0, RTX 40 series 8.9).
    for (name, cc) in [
        ("NVIDIA B300 SXM6 AC", "10.3"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9"),
        ("NVIDIA GeForce RTX 4060 Max-Q", "8.9"),
        ("NVIDIA A100-SXM4-80GB MIG 3g.40gb", "8.0"),
        ("NVIDIA H100 PCIe", "9.0"),
        ("NVIDIA H200 NVL", "9.0"),
        ("Tesla V100-PCIE-16GB", "7.0"),
        ("Tesla T4", "7.5"),
        ("10de:2330", "9.0"),
    ] {
        let argv = [
            "gpukb",
            "plan",
            "--json",
            "--gpu",
            name,
            "--driver",
            "580.95.05",
        ];
        let cli = gpukb_cli::Cli::try_parse_from(argv).unwrap();
        let mut out = Vec::new();
        gpukb_cli::run(&cli, &mut out).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["machine"]["gpus"][0]["cc"], cc, "{name}");
    }
    // An unknown name prints the nearest ones.
    let cli =
        gpukb_cli::Cli::try_parse_from(["gpukb", "plan", "--gpu", "NVIDIA B3000 SXM6"]).unwrap();
    let e = gpukb_cli::run(&cli, &mut Vec::new()).unwrap_err();
    assert!(format!("{e:#}").contains("B300"), "{e:#}");
}
