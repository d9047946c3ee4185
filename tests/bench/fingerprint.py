#!/usr/bin/env python3
"""Benchmark (not a test): wall time and peak RSS of `gpukb fingerprint`
next to the tools a user would otherwise run, in the same session.

usage: tests/bench/fingerprint.py [path/to/gpukb] [runs]
Prints one line per tool: median and min wall time, peak RSS.
"""
import os, resource, shutil, statistics, subprocess, sys, time

gpukb = sys.argv[1] if len(sys.argv) > 1 else "target/release/gpukb"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10


def measure(argv, n):
    """Runs argv n times in a child that reports its own rusage."""
    walls, rss = [], []
    for _ in range(n):
        code = (
            "import resource,subprocess,sys,time;t=time.perf_counter();"
            "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "w=time.perf_counter()-t;r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
            "print(w,r,p.returncode)"
        )
        out = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True).stdout.split()
        walls.append(float(out[0]))
        rss.append(int(out[1]))
    return walls, rss


def row(name, argv, n):
    if shutil.which(argv[0]) is None and not os.path.exists(argv[0]):
        print(f"{name:<42} not installed here")
        return
    walls, rss = measure(argv, n)
    print(
        f"{name:<42} median {statistics.median(walls)*1000:8.1f} ms   min {min(walls)*1000:8.1f} ms"
        f"   peak RSS {max(rss)/1024:7.1f} MB   ({n} runs)"
    )


print(f"host: {os.uname().nodename} {os.uname().machine}, {os.cpu_count()} CPUs")
row("gpukb fingerprint --json", [gpukb, "fingerprint", "--json"], runs)
row("gpukb fingerprint --quick --json", [gpukb, "fingerprint", "--quick", "--json"], runs)
row("gpukb fingerprint (report)", [gpukb, "fingerprint"], runs)
row("nvidia-smi -q", ["nvidia-smi", "-q"], runs)
row("nvidia-smi --query-gpu=... csv", ["nvidia-smi", "--query-gpu=name,driver_version,pcie.link.gen.current", "--format=csv"], runs)
py = os.environ.get("TORCH_PYTHON", "python3")
row(f"{py} -m torch.utils.collect_env", [py, "-m", "torch.utils.collect_env"], max(1, min(3, runs)))
