#!/usr/bin/env python3
"""Benchmark (not a test): each paste with a collect_env report of its own machine beside it.

A pasted collect_env (or nvidia-smi) report is the failing machine's facts when search has
no machine's facts: its GPU, driver release and torch build decide the checks resting on
them (kb/src/ruling.rs, REPORT_DECIDES). This builds, for every paste of FILE whose thread's
`context` names a GPU or a torch build with its CUDA variant, a collect_env report from the
H200's verbatim one (kb/tests/env_reports/) with those facts put in and the lines of facts the
context does not state left out, then prints `gpukb kb eval`'s strict line for the pastes
bare and with their report. Only the context's words go into the report, never the label.

Usage: tests/eval/reports.py FILE [GPUKB] [OUT]
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = open(os.path.join(HERE, "../../kb/tests/env_reports/collect_env-h200.txt"), encoding="utf-8").read()
GPU = re.compile(
    r"\b((?:NVIDIA )?(?:GeForce )?(?:GTX|RTX|TITAN|Quadro|Tesla)\s?[A-Z]{0,2}\s?\d{2,4}[A-Za-z]*"
    r"(?: Ti| SUPER| Super| Laptop GPU)?|(?:NVIDIA |Tesla )?(?:A100|A10G?|A30|A40|A6000|H100|H200|"
    r"H20|L4|L40S?|V100|T4|P100|P40|K80|K40m?|M40|B200|GB200|GB10)(?:[- ]\w+)?)"
)
TORCH = re.compile(r"(?:torch|PyTorch)[ =v]*(\d+\.\d+(?:\.\d+)?)(?:\s*\(?\+?\s*(cu\d{3}|cpu))?", re.I)
DRIVER = re.compile(r"[Dd]river\s*(?:version\s*)?[v:R]?\s*(\d{3}(?:\.\d{1,3}){0,2})\b")


def report(ctx: str):
    """A collect_env report of the facts `ctx` states; None when it states no GPU or build."""
    g, t, d = GPU.search(ctx), TORCH.search(ctx), DRIVER.search(ctx)
    build = t is not None and t.group(2) is not None
    if not build and not g:
        return None
    lines = []
    for line in H200.split("\n"):
        if line.startswith("GPU models and configuration:"):
            if not g:
                continue
            line = "GPU models and configuration: GPU 0: " + g.group(1)
        elif line.startswith("Nvidia driver version:"):
            if not d:
                continue
            line = "Nvidia driver version: " + d.group(1)
        elif line.startswith(("PyTorch version:", "CUDA used to build PyTorch:")):
            if not build:
                continue
            variant = t.group(2)
            cuda = "None" if variant == "cpu" else f"{variant[2:-1]}.{variant[-1]}"
            if line.startswith("PyTorch"):
                line = f"PyTorch version: {t.group(1)}+{variant}"
            else:
                line = "CUDA used to build PyTorch: " + cuda
        lines.append(line)
    return "\n".join(lines)


def strict_line(gpukb: str, path: str) -> str:
    out = subprocess.run([gpukb, "kb", "eval", path], capture_output=True, text=True).stdout
    return next((l.strip() for l in out.splitlines() if re.search(r"strict +top-1", l)), "?")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src = sys.argv[1]
    gpukb = sys.argv[2] if len(sys.argv) > 2 else "target/release/gpukb"
    out = sys.argv[3] if len(sys.argv) > 3 else "/tmp/gpukb-reports"
    os.makedirs(out, exist_ok=True)
    pairs = []
    with open(src, encoding="utf-8") as f:
        for l in f:
            row = json.loads(l)
            rep = report(row.get("context", ""))
            if rep is not None:
                with_report = dict(row, error=row["error"] + "\n\n$ python -m torch.utils.collect_env\n" + rep)
                pairs.append((row, with_report))
    complete = sum(
        1 for _, r in pairs if all(k in r["error"] for k in ("GPU models", "Nvidia driver", "PyTorch version"))
    )
    for name, i in (("bare", 0), ("with report", 1)):
        path = os.path.join(out, name.replace(" ", "-") + ".jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for p in pairs:
                f.write(json.dumps(p[i]) + "\n")
        print(f"{name:12} {strict_line(gpukb, path)}")
    print(f"{len(pairs)} pastes; {complete} with GPU, driver and torch build all stated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
