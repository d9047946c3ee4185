//! The inner error decides: the same error pasted bare and inside a generic wrapper (a
//! Python traceback, vLLM worker log lines, torchrun's rank prefixes, a JSON log record
//! with escaped newlines, Windows paths) gets the same first answer.

use gpukb_kb::Kb;

/// Real error lines (torch, CUDA, NCCL, cuDNN messages as they print).
const INNER: &[&str] = &[
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.12 GiB is free.",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: No CUDA GPUs are available",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 1, 0) but found runtime version (8, 9, 7).",
    "RuntimeError: CUDA error: device-side assert triggered",
];

fn traceback(inner: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"/srv/app/serve.py\", line 88, in <module>\n    main()\n  File \"/srv/app/serve.py\", line 61, in main\n    out = model.generate(**batch)\n  File \"/srv/venv/lib/python3.11/site-packages/torch/utils/_contextlib.py\", line 116, in decorate_context\n    return func(*args, **kwargs)\n{inner}\n"
    )
}

fn vllm(inner: &str) -> String {
    let mut out = String::from(
        "(VllmWorker rank=0 pid=48211) INFO 05-12 10:11:12 [gpu_model_runner.py:1595] Starting to load model meta-llama/Llama-3.1-8B-Instruct...\n",
    );
    for l in traceback(inner).lines() {
        out.push_str(&format!(
            "(VllmWorker rank=0 pid=48211) ERROR 05-12 10:11:14 [multiproc_executor.py:527] {l}\n"
        ));
    }
    out
}

fn torchrun(inner: &str) -> String {
    traceback(inner)
        .lines()
        .map(|l| format!("[rank0]: {l}\n"))
        .collect()
}

fn json_record(inner: &str) -> String {
    let msg = traceback(inner)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("{{\"ts\": \"2025-05-12T10:11:14Z\", \"level\": \"error\", \"logger\": \"worker\", \"msg\": \"{msg}\"}}\n")
}

fn windows(inner: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"C:\\Users\\me\\proj\\train.py\", line 12, in <module>\n    model.to(\"cuda\")\n  File \"C:\\Users\\me\\miniconda3\\envs\\t\\Lib\\site-packages\\torch\\nn\\modules\\module.py\", line 1343, in to\n    return self._apply(convert)\n{inner}\n"
    )
}

/// Wraps an error in one generic form.
type Wrap = fn(&str) -> String;

fn top(kb: &Kb, text: &str) -> Option<String> {
    kb.search(text, None, 3)
        .unwrap()
        .first()
        .map(|h| h.id.clone())
}

#[test]
fn the_inner_error_decides_inside_every_wrapper() {
    let kb = Kb::open().unwrap();
    let wrappers: [(&str, Wrap); 5] = [
        ("traceback", traceback),
        ("vllm worker log", vllm),
        ("torchrun ranks", torchrun),
        ("json record", json_record),
        ("windows paths", windows),
    ];
    let mut wrong = Vec::new();
    for inner in INNER {
        let bare = top(&kb, inner);
        assert!(bare.is_some(), "the bare error matches: {inner}");
        for (name, wrap) in wrappers {
            let got = top(&kb, &wrap(inner));
            if got != bare {
                wrong.push(format!(
                    "{name}: {inner}\n   bare {bare:?}, wrapped {got:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
