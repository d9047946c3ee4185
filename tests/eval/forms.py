#!/usr/bin/env python3
"""Benchmark (not a test): the same pastes in the forms copying and logging put them in.

Writes one JSONL file per form into OUT (default /tmp/gpukb-forms) from the pastes of
FILE, then prints `gpukb kb eval`'s strict line for each, next to the pastes as
collected. A form that loses many pastes is a wrapper or a copy artefact gpukb does not
see through. The forms: Windows line ends, ANSI colours, compose's `svc-1  | ` prefix, a
console's hard wrap at 80 and 120 columns, a mail
client's or forum's fill at 72 columns (broken at spaces), the paste inside a JSON log record, a
page's source with <br> line breaks, BuildKit's and GitHub Actions' line prefixes, a
Markdown code fence, Docker's json-file log lines, PowerShell's error record around a
native command, a Python
repr on a log line, tab indentation, the paste joined onto one line, a Markdown quote, torchrun's
`[rank0]: `, journald's `Mon DD HH:MM:SS host unit[pid]: `, a Ray worker's `(Name pid=N) ` and
`kubectl logs --prefix`'s `[pod/NAME/CONTAINER] `, and a real environment report beside the
error (PyTorch's collect_env, nvidia-smi, nvcc --version, pip list), the first two also with the
lines that name the machine left out (with them, the H200's reports are the facts of a healthy
machine other than the paste's: see tests/eval/reports.py for reports that match the paste).

Usage: tests/eval/forms.py FILE [GPUKB] [OUT]
"""

import json
import os
import textwrap
import subprocess
import sys


def hard_wrap(text: str, width: int) -> str:
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


POWERSHELL_RECORD = """
At line:1 char:1
+ python app.py
+ ~~~~~~~~~~~~~
    + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException
    + FullyQualifiedErrorId : NativeCommandError"""

# Real reports printed on the H200 host (kb/tests/env_reports/SOURCE.md).
REPORTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kb/tests/env_reports")
REPORTS = {
    n: open(os.path.join(REPORTS_DIR, n), encoding="utf-8").read()
    for n in ("collect_env-h200.txt", "nvidia-smi-h200.txt", "nvcc-version-h200.txt")
}
# pip list's layout, with the H200 venv's NVIDIA packages (versions from its collect_env).
PIP_LIST = """Package                  Version
------------------------ ------------
nvidia-cublas            13.1.0.3
nvidia-cudnn-cu13        9.19.0.56
nvidia-nccl-cu13         2.28.9
torch                    2.11.0+cu130
triton                   3.6.0
"""

FACT_LINES = ("GPU models and configuration:", "Nvidia driver version:", "PyTorch version:", "CUDA used to build PyTorch:")


def without_facts(report: str) -> str:
    """The report without the lines that say which machine it is."""
    return "\n".join(
        l for l in report.split("\n")
        if not l.startswith(FACT_LINES) and "Driver Version:" not in l
    )


FORMS = {
    "as collected": lambda s: s,
    "CRLF line ends": lambda s: s.replace("\n", "\r\n"),
    "ANSI colours": lambda s: "\n".join(f"\x1b[31m{l}\x1b[0m" for l in s.split("\n")),
    "compose prefix": lambda s: "\n".join(f"app-1  | {l}" for l in s.split("\n")),
    "hard wrap at 80": lambda s: hard_wrap(s, 80),
    "hard wrap at 120": lambda s: hard_wrap(s, 120),
    "filled at 72": lambda s: "\n".join(
        textwrap.fill(l, 72, break_long_words=False, break_on_hyphens=False) if l.strip() else l
        for l in s.split("\n")
    ),
    "JSON log record": lambda s: json.dumps({"level": "error", "msg": s}),
    "HTML <br> lines": lambda s: "<br>".join(s.split("\n")),
    "Docker json-file log": lambda s: "\n".join(
        json.dumps({"log": l + "\n", "stream": "stderr", "time": "2025-06-01T10:00:00Z"}) for l in s.split("\n")
    ),
    "PowerShell record": lambda s: "python : " + s + POWERSHELL_RECORD,
    "Python repr": lambda s: "ERROR: " + repr(s),
    "BuildKit progress": lambda s: "\n".join(f"#12 {3.1 + i / 100:.3f} {l}" for i, l in enumerate(s.split("\n"))),
    "GitHub Actions log": lambda s: "\n".join(f"2025-06-01T10:00:{i % 60:02}.1234567Z {l}" for i, l in enumerate(s.split("\n"))),
    "Markdown fence": lambda s: "```python\n" + s + "\n```",
    "tab indent": lambda s: "\n".join("\t" + l for l in s.split("\n")),
    "one line": lambda s: " ".join(s.split("\n")),
    "Markdown quote": lambda s: "\n".join(f"> {l}" for l in s.split("\n")),
    "torchrun rank": lambda s: "\n".join(f"[rank0]: {l}" for l in s.split("\n")),
    "journalctl": lambda s: "\n".join(
        f"Dec 06 12:00:{i % 60:02} gpu-node-3 ollama[2841]: {l}" for i, l in enumerate(s.split("\n"))
    ),
    "Ray worker": lambda s: "\n".join(f"(RayWorkerWrapper pid=4121) {l}" for l in s.split("\n")),
    "kubectl --prefix": lambda s: "\n".join(f"[pod/trainer-0/main] {l}" for l in s.split("\n")),
    "collect_env after": lambda s: s + "\n\n$ python -m torch.utils.collect_env\n" + REPORTS["collect_env-h200.txt"],
    "nvidia-smi before": lambda s: "$ nvidia-smi\n" + REPORTS["nvidia-smi-h200.txt"] + "\n" + s,
    # The same reports with the lines that name the machine (GPU, driver, torch build) left
    # out: what the report's text alone does to the ranking. With them, the H200's reports are
    # facts of a healthy machine other than the paste's and rule out causes it does not have.
    "collect_env, no facts": lambda s: s + "\n\n$ python -m torch.utils.collect_env\n" + without_facts(REPORTS["collect_env-h200.txt"]),
    "nvidia-smi, no facts": lambda s: "$ nvidia-smi\n" + without_facts(REPORTS["nvidia-smi-h200.txt"]) + "\n" + s,
    "nvcc --version before": lambda s: "$ nvcc --version\n" + REPORTS["nvcc-version-h200.txt"] + s,
    "pip list after": lambda s: s + "\n\n$ pip list\n" + PIP_LIST,
}


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src = sys.argv[1]
    gpukb = sys.argv[2] if len(sys.argv) > 2 else "target/release/gpukb"
    out = sys.argv[3] if len(sys.argv) > 3 else "/tmp/gpukb-forms"
    os.makedirs(out, exist_ok=True)
    rows = [json.loads(l) for l in open(src, encoding="utf-8") if l.strip()]
    for i, (name, form) in enumerate(FORMS.items()):
        path = os.path.join(out, f"{i:02}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({**r, "error": form(r["error"])}, ensure_ascii=False) + "\n")
        res = subprocess.run([gpukb, "kb", "eval", path], capture_output=True, text=True)
        line = next((l for l in res.stdout.splitlines() if "strict" in l and "top-1" in l), res.stderr.strip())
        print(f"{name:<21} {line.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
