//! Junk is not a diagnosis: text with no error in it (prose from a word list, logs of
//! runs that succeeded, base64 noise, one word such as "failed") matches nothing, so
//! `gpukb search` exits 1. The set is generated from a printed seed (at least 500 cases).

use gpukb_kb::Kb;

/// xorshift64*: a seeded generator (the test needs no crate for it).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "this",
    "is",
    "fine",
    "we",
    "went",
    "to",
    "market",
    "and",
    "bought",
    "some",
    "apples",
    "river",
    "mountain",
    "yesterday",
    "morning",
    "coffee",
    "table",
    "window",
    "garden",
    "music",
    "paper",
    "blue",
    "green",
    "happy",
    "small",
    "large",
    "quiet",
    "meeting",
    "project",
    "team",
    "plan",
    "weekend",
    "travel",
    "train",
    "station",
    "city",
    "north",
    "south",
    "book",
    "chapter",
    "story",
    "friend",
    "family",
    "dinner",
    "kitchen",
    "recipe",
    "bread",
    "butter",
    "cheese",
    "weather",
    "sunny",
    "rain",
    "cloud",
    "wind",
    "winter",
    "summer",
    "school",
    "lesson",
    "teacher",
    "student",
    "question",
    "answer",
    "idea",
    "simple",
    "clear",
    "open",
    "close",
    "read",
    "write",
    "walk",
    "run",
    "sit",
    "stand",
    "think",
    "know",
    "see",
    "look",
    "good",
    "bad",
    "new",
    "old",
    "first",
    "last",
    "long",
    "short",
    "great",
    "little",
    "right",
    "left",
    // words of a slow GPU run, without the GPU: still prose
    "slow",
    "slower",
    "than",
    "expected",
    "runs",
];

/// Logs of runs that worked (installs, training, inference servers, tools).
const OK_LOGS: &[&str] = &[
    "Successfully installed torch-2.5.1 torchvision-0.20.1 nvidia-cudnn-cu12-9.1.0.70",
    "Requirement already satisfied: numpy in ./venv/lib/python3.11/site-packages (1.26.4)",
    "Epoch {n}/10: loss=0.{n}31 acc=0.9{n} lr=3e-4 time=12.{n}s",
    "100%|##########| {n}/{n} [00:1{n}<00:00, 4.{n}it/s]",
    ">>> import torch; torch.cuda.is_available()\nTrue",
    "2.5.1+cu124 12.4 True NVIDIA H200",
    "INFO:     Application startup complete.\nINFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    "INFO 05-12 10:11:1{n} [model_runner.py:1{n}] Loading model weights took 14.9{n} GiB",
    "Build succeeded. 0 Warning(s) 0 Error(s)",
    "test result: ok. {n}2 passed; 0 failed; 0 ignored; finished in 1.{n}s",
    "Digest: sha256:4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b\nStatus: Downloaded newer image for nvidia/cuda:12.4.1-base-ubuntu22.04",
    "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131",
    "Fri Mar  1 10:0{n}:00 2024\n| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |\n|   0  NVIDIA A100-SXM4-80GB  On | 00000000:07:00.0 Off | 0 |\n| N/A 3{n}C P0 6{n}W / 400W | 0MiB / 81920MiB | 0% Default |",
    "#  out-of-place in-place\n# size count type redop root time algbw busbw #wrong\n 8388608 2097152 float sum -1 1{n}3.4 5{n}.2 9{n}.1 0",
    "Compiling gpukb v0.1.0\n    Finished `release` profile [optimized] target(s) in {n}4.2s",
    "[notice] A new release of pip is available: 24.0 -> 24.{n}",
    "Saved checkpoint to ./checkpoints/step_{n}000.pt",
    "Generated {n} tokens in 0.{n}s ({n}31.2 tokens/s)",
    // near misses of the failure phrases search looks for: code 0, no failures, a link up
    "Process finished with exit code 0",
    ">>> tf.config.list_physical_devices('GPU')\n[PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]",
    "torch.cuda.is_available() returns True on all {n} nodes",
    "Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease\nReading package lists... Done\nAll packages are up to date.",
    "Ran {n}4 tests in 3.{n}s\n\nOK (0 failures, 0 errors)",
    "NCCL INFO Bootstrap : Using eth0:10.0.{n}.2<0>\nNCCL INFO comm 0x55d1 rank 0 nranks 8 - Init COMPLETE",
    "Found existing installation: torch 2.4.{n}\nUninstalling torch-2.4.{n}:\n  Successfully uninstalled torch-2.4.{n}",
    "Connection to 10.0.0.{n} port 22 [tcp/ssh] succeeded!",
    "Detected {n} CUDA Capable device(s)\n\nDevice 0: \"NVIDIA H200\"\nResult = PASS",
];

const WORDISH: &[&str] = &[
    "failed", "error", "fine", "ok", "warning", "done", "cuda", "nvidia",
];

fn prose(r: &mut Rng) -> String {
    let n = 3 + r.below(40);
    (0..n).map(|_| r.pick(WORDS)).collect::<Vec<_>>().join(" ")
}

fn ok_log(r: &mut Rng) -> String {
    let lines = 1 + r.below(4);
    (0..lines)
        .map(|_| {
            let d = r.below(9).to_string();
            r.pick(OK_LOGS).replace("{n}", &d)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn base64(r: &mut Rng) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let n = 16 + r.below(600);
    let mut s: String = (0..n).map(|_| A[r.below(64)] as char).collect();
    if r.below(2) == 0 {
        s.push_str("==");
    }
    s
}

fn junk_set(seed: u64, n: usize) -> Vec<(String, String)> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (kind, text) = match i % 4 {
            0 => ("prose", prose(&mut r)),
            1 => ("successful run", ok_log(&mut r)),
            2 => ("base64", base64(&mut r)),
            _ if i % 8 == 3 => ("one word", r.pick(WORDISH).to_string()),
            _ => (
                "prose + run",
                format!("{}\n{}", prose(&mut r), ok_log(&mut r)),
            ),
        };
        out.push((kind.to_string(), text));
    }
    out
}

#[test]
fn a_generated_junk_set_matches_nothing() {
    let seed = 0x6a75_6e6b_2026_1202;
    println!("junk seed {seed:#x}");
    let kb = Kb::open().unwrap();
    let set = junk_set(seed, 520);
    let mut matched = Vec::new();
    for (kind, text) in &set {
        let hits = kb.search(text, None, 3).unwrap();
        if let Some(h) = hits.first() {
            matched.push(format!(
                "{kind}: {:?} -> {} {:?}",
                short(text),
                h.id,
                h.matched
            ));
        }
    }
    assert!(
        matched.is_empty(),
        "{} of {} junk cases matched (seed {seed:#x}):\n{}",
        matched.len(),
        set.len(),
        matched.join("\n")
    );
}

#[test]
fn the_readme_s_examples_of_junk_match_nothing() {
    let kb = Kb::open().unwrap();
    for t in [
        "this is fine",
        "the quick brown fox",
        "failed",
        "aGVsbG8gd29ybGQK",
    ] {
        assert!(kb.search(t, None, 3).unwrap().is_empty(), "{t}");
    }
}

fn short(s: &str) -> String {
    s.chars().take(90).collect()
}

/// The H200 recorded live, with GPU 0's PCIe link trained at x8 of x16 (a warning the
/// doctor names as the root cause) or with every GPU hidden by `CUDA_VISIBLE_DEVICES=""`
/// (a failure): a broken machine does not make junk a diagnosis.
fn broken_machines() -> Vec<(&'static str, gpukb_kb::MachineFacts)> {
    let base: serde_json::Value = serde_json::from_str(include_str!(
        "../../tests/fixtures/healthy/h200-live-2026-12-01/fingerprint.json"
    ))
    .unwrap();
    let mut pcie = base.clone();
    pcie["nvml"]["value"]["gpus"][0]["pcie_width_current"] = 8.into();
    let mut hidden = base;
    let env = hidden["env"].as_array_mut().unwrap();
    env.retain(|e| e["name"] != "CUDA_VISIBLE_DEVICES");
    env.push(serde_json::json!({"name": "CUDA_VISIBLE_DEVICES", "value": ""}));
    [
        ("PCIe x8 of x16", pcie),
        ("CUDA_VISIBLE_DEVICES=\"\"", hidden),
    ]
    .into_iter()
    .map(|(name, v)| {
        let fp = gpukb_facts::read::fingerprint_from_json(v.to_string().as_bytes()).unwrap();
        (name, gpukb_kb::MachineFacts::observe(&fp, name))
    })
    .collect()
}

#[test]
fn junk_matches_nothing_on_a_broken_machine_either() {
    let seed = 0x6a75_6e6b_2026_1204;
    println!("junk seed {seed:#x}");
    let kb = Kb::open().unwrap();
    let set = junk_set(seed, 200);
    let mut matched = Vec::new();
    for (machine, facts) in broken_machines() {
        assert_ne!(
            facts.diagnosis.verdict,
            gpukb_doctor::Verdict::Ok,
            "{machine}: the edited fingerprint is not broken"
        );
        for (kind, text) in &set {
            if let Some(h) = kb.search(text, Some(&facts), 3).unwrap().first() {
                matched.push(format!("{machine}: {kind}: {:?} -> {}", short(text), h.id));
            }
        }
    }
    assert!(
        matched.is_empty(),
        "{} junk cases matched on a broken machine (seed {seed:#x}):\n{}",
        matched.len(),
        matched.join("\n")
    );
}

#[test]
fn a_slow_run_on_a_machine_with_a_degraded_link_is_that_link() {
    let kb = Kb::open().unwrap();
    let (_, pcie) = broken_machines().remove(0);
    let text =
        "NCCL all_reduce bandwidth is far below the expected busbw; host-to-device copies are slow";
    let hits = kb.search(text, Some(&pcie), 3).unwrap();
    assert_eq!(
        hits.first().map(|h| h.category.as_str()),
        Some("pcie_link_downtrained")
    );
}

#[test]
fn slowness_without_a_gpu_in_it_is_prose() {
    let kb = Kb::open().unwrap();
    for t in [
        "the quick brown fox is slow",
        "internet is slow",
        "dinner was slower than expected",
        "the bus runs slow",
    ] {
        let hits = kb.search(t, None, 3).unwrap();
        assert!(
            hits.is_empty(),
            "{t:?} -> {:?}",
            hits.first().map(|h| &h.id)
        );
    }
    // …while a slow GPU run states a failure.
    assert!(!kb
        .search("my GPU training is very slow", None, 3)
        .unwrap()
        .is_empty());
}
