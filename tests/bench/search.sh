#!/usr/bin/env bash
# Times `gpukb search` with its default detection (cheap facts of this machine: no
# cuInit, the ELF summary cache warm after the first run), with --no-detect, and
# `python3 -c pass` (what any Python-based helper costs before it does anything),
# side by side in one run. Prints the median and minimum wall time of N runs each.
# Usage: tests/bench/search.sh [path/to/gpukb] [N]
set -euo pipefail
GPUKB=${1:-target/release/gpukb}
N=${2:-21}
PASTE='RuntimeError: CUDA error: no kernel image is available for execution on the device'
python3 - "$GPUKB" "$N" "$PASTE" <<'PY'
import statistics, subprocess, sys, time
gpukb, n, paste = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cases = [
    ("gpukb search (default: detects this machine)", [gpukb, "search", paste]),
    ("gpukb search --no-detect", [gpukb, "search", "--no-detect", paste]),
    ("python3 -c pass", ["python3", "-c", "pass"]),
]
res = {}
for name, argv in cases:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm
    t = []
    for _ in range(n):
        s = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t.append(time.perf_counter() - s)
    res[name] = (statistics.median(t), min(t))
    print(f"{name:48s} median {res[name][0]*1000:7.1f} ms   min {res[name][1]*1000:7.1f} ms")
d, nd, py = (res[c[0]][0] for c in cases)
print(f"default / --no-detect = {d/nd:.2f}x   --no-detect / python3 -c pass = {nd/py:.2f}x")
PY
