#!/usr/bin/env python3
"""Benchmark (not a test): cold-process wall time of gpukb search next to `python3 -c pass`,
the commands interleaved round by round, so a host whose speed drifts between rounds (a shared
cloud VM) slows every command alike instead of whichever block ran then.

Usage: tests/bench/interleave.py [N] [BASE_BIN] [BIN] [PYTHON...]
  N        rounds (default 200)
  BASE_BIN a build to compare with (default: none; "-" for none)
  BIN      the build measured (default target/release/gpukb)
  PYTHON   interpreters to time `-c pass` with (default: python3 on PATH)
Prints the median of each command, its ratio to the first interpreter, the median of the
per-round ratios, and default detection over --no-detect.
"""

import os
import shutil
import statistics
import subprocess
import sys
import time

QUERY = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def main() -> int:
    args = sys.argv[1:]
    n = int(args[0]) if args else 200
    base = args[1] if len(args) > 1 and args[1] != "-" else None
    binary = args[2] if len(args) > 2 else "target/release/gpukb"
    pythons = args[3:] or [shutil.which("python3") or "python3"]
    builds = [("base", base)] if base else []
    builds.append(("this", binary))
    for _, b in builds:
        if not os.access(b, os.X_OK):
            print(f"not an executable: {b}", file=sys.stderr)
            return 2
    cmds = {}
    for name, b in builds:
        cmds[f"{name} --no-detect"] = [b, "search", "--no-detect", QUERY]
        cmds[f"{name} default"] = [b, "search", QUERY]
    for p in pythons:
        cmds[f"{p} -c pass"] = [p, "-c", "pass"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    for c in cmds.values():
        for _ in range(3):
            subprocess.run(c, **quiet, check=False)
    times = {k: [] for k in cmds}
    for _ in range(n):
        for k, c in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(c, **quiet, check=False)
            times[k].append((time.perf_counter() - t0) * 1000)
    ref = f"{pythons[0]} -c pass"
    ref_ms = statistics.median(times[ref])
    print(f"interleaved, {n} rounds ({os.cpu_count()} cores); median wall ms, ratio to {ref}")
    for k, v in times.items():
        m = statistics.median(v)
        print(f"{k:<40} {m:8.2f} ms {m / ref_ms:7.3f}x")
    for name, _ in builds:
        nd = times[f"{name} --no-detect"]
        r = [a / b for a, b in zip(nd, times[ref])]
        d = [a / b for a, b in zip(times[f"{name} default"], nd)]
        print(
            f"{name}: --no-detect / {ref} per round {statistics.median(r):.3f}x;"
            f" default / --no-detect per round {statistics.median(d):.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
