#!/usr/bin/env python3
"""Regenerates agent/facts/data/torch_builds.csv, the sourced PyTorch build
table behind `gpukb plan`.

Two kinds of rows:

* Rows for wheels on PyPI (torch 2.7.0 ... newest, Linux x86_64 and aarch64)
  come from the wheels themselves: the wheel's METADATA (Requires-Python,
  nvidia-* / cuda-toolkit pins), `torch/version.py` (the CUDA version) and
  gpukb's own fatbin reader run on `torch/lib/libtorch_cuda.so`. The wheel is
  never downloaded whole: HTTP range requests read the zip's central
  directory, then only those members; the unpacked library is deleted at
  once. Each row cites the wheel's file name and sha256.
* Every other variant (download.pytorch.org builds, releases before 2.7)
  comes from PyTorch's build scripts and release matrix, transcribed in
  SCRIPTED below with the file (and commit where read) it comes from.

torchvision / torchaudio pairs come from those packages' PyPI metadata
(`Requires-Dist: torch==X`).

Usage: python3 agent/facts/data/regen_torch_builds.py [--only 2.15.0 ...]
Needs network access to PyPI and cargo (builds the fatbin_summary example).
"""

import argparse
import csv
import datetime
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import urllib.request
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
OUT = os.path.join(HERE, "torch_builds.csv")
PYPI = "https://pypi.org/pypi"
FILES = "https://files.pythonhosted.org/"
TIMEOUT = 120
FIRST_READ = (2, 7, 0)
COLUMNS = [
    "release", "variant", "platform", "cuda", "python", "manylinux", "sass",
    "sass_partial", "ptx", "cudnn", "nccl", "pypi_default", "index_url",
    "torchvision", "torchaudio", "wheel", "sha256", "source", "as_of",
]

# Builds not readable from PyPI, from PyTorch's own build configuration.
# Sources (short names):
#  BUILDER  = pytorch/builder manywheel/build_cuda.sh (build.sh <= 1.10), the
#             TORCH_CUDA_ARCH_LIST case block on the release branch
#  PTCI     = pytorch/pytorch .ci/manywheel/build_cuda.sh at the release branch
#             (2.8: commit 00c7a380b8369d08e02dd400aa76dc6c0738b589)
#  RELEASE  = pytorch/pytorch RELEASE.md, "Release Compatibility Matrix"
#  TI       = pytorch/test-infra tools/scripts/generate_binary_build_matrix.py
#             CUDA_ARCHES_DICT (which variants each release published)
# Transcribed (with the errata applied) from shared/research/compat-facts.md
# §2b/§2c and data/torch_wheels.csv, as of 2026-12-01.
# (releases, variant, platform, cuda, sass, ptx, cudnn, nccl, pypi_default, source)
S_K = "sm_37;sm_50;sm_60;sm_70"
S_111 = "sm_37;sm_50;sm_60;sm_70;sm_75;sm_80;sm_86"
S_118 = "sm_37;sm_50;sm_60;sm_70;sm_75;sm_80;sm_86;sm_90"
S_12 = "sm_50;sm_60;sm_70;sm_75;sm_80;sm_86;sm_90"
S_128 = "sm_75;sm_80;sm_86;sm_90;sm_100;sm_120"
S_128V = "sm_70;sm_75;sm_80;sm_86;sm_90;sm_100;sm_120"
S_A64 = "sm_80;sm_90;sm_100;sm_110;sm_120"
B = "pytorch/builder {br} manywheel/build{sh}.sh TORCH_CUDA_ARCH_LIST; pytorch/test-infra generate_binary_build_matrix.py CUDA_ARCHES_DICT"
R = "pytorch/pytorch RELEASE.md release compatibility matrix; .ci/manywheel/build_cuda.sh (release branch)"
SCRIPTED = [
    (["1.8.0", "1.8.1"], "cu102", "x86_64", "10.2", S_K, "", "7.6.5.32", "", True, B.format(br="lts/release/1.8", sh="")),
    (["1.8.1"], "cu101", "x86_64", "10.1", S_K, "", "7.6.3.30", "", False, B.format(br="lts/release/1.8", sh="")),
    (["1.8.0", "1.8.1"], "cu111", "x86_64", "11.1", S_111, "", "8.0.5.39", "", False, B.format(br="lts/release/1.8", sh="")),
    (["1.9.0", "1.9.1"], "cu102", "x86_64", "10.2", S_K, "", "7.6.5.32", "", True, B.format(br="release/1.9", sh="")),
    (["1.9.0", "1.9.1"], "cu111", "x86_64", "11.1", S_111, "", "8.0.5.39", "", False, B.format(br="release/1.9", sh="")),
    (["1.10.0", "1.10.1", "1.10.2"], "cu102", "x86_64", "10.2", S_K, "", "7.6.5.32", "", True, B.format(br="release/1.10", sh="")),
    (["1.10.0", "1.10.1", "1.10.2"], "cu111", "x86_64", "11.1", S_111, "", "8.0.5.39", "", False, B.format(br="release/1.10", sh="")),
    (["1.10.0", "1.10.1", "1.10.2"], "cu113", "x86_64", "11.3", S_111, "", "8.2.0.53", "", False, B.format(br="release/1.10", sh="")),
    (["1.11.0"], "cu102", "x86_64", "10.2", S_K, "", "7.6.5.32", "", True, B.format(br="release/1.11", sh="_cuda")),
    (["1.11.0"], "cu113", "x86_64", "11.3", S_111, "", "8.2.0.53", "", False, B.format(br="release/1.11", sh="_cuda")),
    (["1.11.0"], "cu115", "x86_64", "11.5", S_111, "", "8.3.2.44", "", False, B.format(br="release/1.11", sh="_cuda")),
    (["1.12.0", "1.12.1"], "cu102", "x86_64", "10.2", S_K, "", "7.6.5.32", "", True, B.format(br="release/1.12", sh="_cuda")),
    (["1.12.0", "1.12.1"], "cu113", "x86_64", "11.3", S_111, "", "8.3.2.44", "", False, B.format(br="release/1.12", sh="_cuda")),
    (["1.12.0", "1.12.1"], "cu116", "x86_64", "11.6", S_111, "", "8.3.2.44", "", False, B.format(br="release/1.12", sh="_cuda")),
    (["1.13.0", "1.13.1"], "cu116", "x86_64", "11.6", S_111, "", "8.3.2.44", "", False, B.format(br="release/1.13", sh="_cuda")),
    (["1.13.0", "1.13.1"], "cu117", "x86_64", "11.7", S_111, "", "8.5.0.96", "", True, B.format(br="release/1.13", sh="_cuda") + "; PyPI METADATA nvidia-cudnn-cu11==8.5.0.96"),
    (["2.0.0", "2.0.1"], "cu117", "x86_64", "11.7", S_111, "", "8.5.0.96", "2.14.3", True, B.format(br="release/2.0", sh="_cuda") + "; PyPI METADATA"),
    (["2.0.0", "2.0.1"], "cu118", "x86_64", "11.8", S_118, "", "8.7.0.84", "2.15.5", False, B.format(br="release/2.0", sh="_cuda")),
    (["2.1.0", "2.1.1", "2.1.2"], "cu118", "x86_64", "11.8", S_118, "", "8.7.0.84", "", False, B.format(br="release/2.1", sh="_cuda")),
    (["2.1.0", "2.1.1", "2.1.2"], "cu121", "x86_64", "12.1", S_12, "", "8.9.2.26", "2.18.1", True, B.format(br="release/2.1", sh="_cuda") + "; PyPI METADATA"),
    (["2.2.0", "2.2.1", "2.2.2"], "cu118", "x86_64", "11.8", S_118, "", "8.7.0.84", "", False, B.format(br="release/2.2", sh="_cuda")),
    (["2.2.0", "2.2.1", "2.2.2"], "cu121", "x86_64", "12.1", S_12, "", "8.9.2.26", "2.19.3", True, B.format(br="release/2.2", sh="_cuda") + "; PyPI METADATA"),
    (["2.3.0", "2.3.1"], "cu118", "x86_64", "11.8", S_118, "", "8.7.0.84", "", False, B.format(br="release/2.3", sh="_cuda")),
    (["2.3.0", "2.3.1"], "cu121", "x86_64", "12.1", S_12, "", "8.9.2.26", "2.20.5", True, B.format(br="release/2.3", sh="_cuda") + "; PyPI METADATA"),
    (["2.4.0", "2.4.1"], "cu118", "x86_64", "11.8", S_118, "", "9.1.0.70", "", False, B.format(br="release/2.4", sh="_cuda")),
    (["2.4.0", "2.4.1"], "cu121", "x86_64", "12.1", S_12, "", "9.1.0.70", "2.20.5", True, B.format(br="release/2.4", sh="_cuda") + "; PyPI METADATA"),
    (["2.4.0", "2.4.1"], "cu124", "x86_64", "12.4", S_12, "", "9.1.0.70", "", False, B.format(br="release/2.4", sh="_cuda")),
    (["2.4.0", "2.4.1"], "cu124", "aarch64", "12.4", "sm_90", "", "", "", False, R + " (aarch64 sbsa list 9.0)"),
    (["2.5.0", "2.5.1"], "cu118", "x86_64", "11.8", S_118, "", "9.1.0.70", "", False, B.format(br="release/2.5", sh="_cuda")),
    (["2.5.0", "2.5.1"], "cu121", "x86_64", "12.1", S_12, "", "9.1.0.70", "", False, B.format(br="release/2.5", sh="_cuda")),
    (["2.5.0", "2.5.1"], "cu124", "x86_64", "12.4", S_12, "", "9.1.0.70", "2.21.5", True, B.format(br="release/2.5", sh="_cuda") + "; PyPI METADATA"),
    (["2.5.0", "2.5.1"], "cu124", "aarch64", "12.4", "sm_90", "", "", "", False, R + " (aarch64 sbsa list 9.0)"),
    (["2.6.0"], "cu118", "x86_64", "11.8", S_118, "", "9.1.0.70", "", False, R),
    (["2.6.0"], "cu124", "x86_64", "12.4", S_12, "", "9.1.0.70", "2.21.5", True, R + "; PyPI METADATA"),
    (["2.6.0"], "cu126", "x86_64", "12.6", S_12, "", "9.5.1.17", "", False, R + " (cuDNN per compat-facts errata 6)"),
    (["2.6.0"], "cu126", "aarch64", "12.6", "sm_90", "", "", "", False, R + " (aarch64 sbsa list 9.0)"),
    (["2.7.0", "2.7.1"], "cu118", "x86_64", "11.8", S_118, "", "9.1.0.70", "", False, R),
    (["2.7.0", "2.7.1"], "cu128", "x86_64", "12.8", S_128, "", "9.7.1.26", "", False, R + "; PR #147607 (drop sm_70 from 12.8)"),
    (["2.7.0", "2.7.1"], "cu128", "aarch64", "12.8", "sm_90;sm_100;sm_120", "", "", "", False, R),
    (["2.8.0"], "cu126", "x86_64", "12.6", S_12, "", "9.10.2.21", "", False, "pytorch/pytorch .ci/manywheel/build_cuda.sh @00c7a380b8369d08e02dd400aa76dc6c0738b589 (12.6)"),
    (["2.8.0"], "cu129", "x86_64", "12.9", S_128V, "compute_120", "9.10.2.21", "", False, "pytorch/pytorch .ci/manywheel/build_cuda.sh @00c7a380b8369d08e02dd400aa76dc6c0738b589 (12.9: 7.0...12.0+PTX)"),
    (["2.8.0"], "cu128", "aarch64", "12.8", "sm_90;sm_100;sm_120", "", "", "", False, R),
    (["2.9.0", "2.9.1", "2.10.0"], "cu126", "x86_64", "12.6", S_12, "", "", "", False, R),
    (["2.9.0", "2.9.1", "2.10.0"], "cu130", "x86_64", "13.0", S_128, "compute_120", "", "", False, R + " (12.0+PTX; not read from a wheel)"),
    (["2.9.0", "2.9.1", "2.10.0"], "cu130", "aarch64", "13.0", "sm_80;sm_90;sm_100;sm_110;sm_120", "", "", "", False, R + "; compat-facts errata 5 (aarch64 filters 7.5 and 8.6)"),
    (["2.11.0"], "cu126", "x86_64", "12.6", S_12, "", "", "", False, R + "; pytorch/pytorch#182250 (get_arch_list)"),
    (["2.11.0"], "cu128", "x86_64", "12.8", S_128, "", "", "", False, "pytorch/pytorch#182250 (2.11 cu128 get_arch_list sm_75...sm_120)"),
    (["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"], "cu126", "x86_64", "12.6", S_12, "", "9.10.2.21", "", False, R),
    (["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"], "cu132", "x86_64", "13.2", S_128, "", "", "", False, R + " (RELEASE.md says 12.0+PTX; release wheels of 2.12+ carry none: compat-facts errata 4)"),
    (["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"], "cu132", "aarch64", "13.2", S_A64, "", "", "", False, R),
    (["2.15.0"], "cu130", "x86_64", "13.0", "unknown", "unknown", "", "", False, "pytorch/pytorch RFC #190385 (2.15 variants); arch list not verified"),
    (["2.15.0"], "cu130", "aarch64", "13.0", "unknown", "unknown", "", "", False, "pytorch/pytorch RFC #190385 (2.15 variants); arch list not verified"),
    # aarch64 CUDA builds on download.pytorch.org (GH200/GB200/GB300/DGX Spark), as of 2026-12-04:
    # which variants from test-infra's CUDA_AARCH64_ARCHES while the release was the
    # candidate; arch lists from .ci/aarch64_linux/aarch64_ci_build.sh where found.
    (["2.8.0"], "cu129", "aarch64", "12.9", "sm_80;sm_90;sm_100;sm_120", "", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.9-aarch64\"] while 2.8.0 was the release candidate (commit 708f2e6e5, 2025-06-24); pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh, 2.8/2.9-era revision (12.9 -> TORCH_CUDA_ARCH_LIST 8.0;9.0;10.0;12.0); targets as the script sets them, not read from a wheel"),
    (["2.9.0", "2.9.1"], "cu126", "aarch64", "12.6", "sm_80;sm_90", "", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.9.x was the release candidate (commit 05023d300 2025-09-10, 16c076616 2025-11-06); pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh, 2.9/2.10-era revision (12.6 -> TORCH_CUDA_ARCH_LIST 8.0;9.0; 12.8 -> 8.0;9.0;10.0;12.0; 13.0 -> 8.0;9.0;10.0;11.0;12.0+PTX); targets as the script sets them, not read from a wheel"),
    (["2.9.0", "2.9.1"], "cu128", "aarch64", "12.8", "sm_80;sm_90;sm_100;sm_120", "", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.9.x was the release candidate (commit 05023d300 2025-09-10, 16c076616 2025-11-06); pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh, 2.9/2.10-era revision (12.6 -> TORCH_CUDA_ARCH_LIST 8.0;9.0; 12.8 -> 8.0;9.0;10.0;12.0; 13.0 -> 8.0;9.0;10.0;11.0;12.0+PTX); targets as the script sets them, not read from a wheel"),
    (["2.10.0"], "cu126", "aarch64", "12.6", "sm_80;sm_90", "", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.10.0 was the release candidate (commit e98168b0d 2025-12-11); pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh, 2.9/2.10-era revision (12.6 -> TORCH_CUDA_ARCH_LIST 8.0;9.0; 12.8 -> 8.0;9.0;10.0;12.0; 13.0 -> 8.0;9.0;10.0;11.0;12.0+PTX); targets as the script sets them, not read from a wheel"),
    (["2.10.0"], "cu128", "aarch64", "12.8", "sm_80;sm_90;sm_100;sm_120", "", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.10.0 was the release candidate (commit e98168b0d 2025-12-11); pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh, 2.9/2.10-era revision (12.6 -> TORCH_CUDA_ARCH_LIST 8.0;9.0; 12.8 -> 8.0;9.0;10.0;12.0; 13.0 -> 8.0;9.0;10.0;11.0;12.0+PTX); targets as the script sets them, not read from a wheel"),
    (["2.11.0"], "cu126", "aarch64", "12.6", "unknown", "unknown", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.11.0 was the release candidate (commit 417d17c01 2026-02-16); arch list of this aarch64 variant not found in a build script of the release: targets not verified"),
    (["2.11.0"], "cu128", "aarch64", "12.8", "unknown", "unknown", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"12.8-aarch64\", \"13.0-aarch64\"] while 2.11.0 was the release candidate (commit 417d17c01 2026-02-16); arch list of this aarch64 variant not found in a build script of the release: targets not verified"),
    (["2.12.0", "2.12.1"], "cu126", "aarch64", "12.6", "unknown", "unknown", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"13.0-aarch64\", \"13.2-aarch64\"] while 2.12.x was the release candidate (commit de717a4fd 2026-04-15, 77e179c3b 2026-06-17); arch list of this aarch64 variant not found in a build script of the release: targets not verified"),
    (["2.13.0"], "cu126", "aarch64", "12.6", "unknown", "unknown", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"13.0-aarch64\", \"13.2-aarch64\"] while 2.13.0 was the release candidate (commit 6d36e31f4 2026-07-08); arch list of this aarch64 variant not found in a build script of the release: targets not verified"),
    (["2.14.0", "2.14.1"], "cu126", "aarch64", "12.6", "unknown", "unknown", "", "", False, "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py CUDA_AARCH64_ARCHES [\"12.6-aarch64\", \"13.0-aarch64\", \"13.2-aarch64\", \"13.4-aarch64\"] while 2.14.x was the release candidate (commit 00fa5780c 2026-08-11); arch list of this aarch64 variant not found in a build script of the release: targets not verified"),
]


def http(url, start=None, end=None):
    req = urllib.request.Request(url, headers={"User-Agent": "gpukb-regen"})
    if start is not None:
        req.add_header("Range", f"bytes={start}-{'' if end is None else end}")
    return urllib.request.urlopen(req, timeout=TIMEOUT)


def pypi_json(path):
    with http(f"{PYPI}/{path}/json") as r:
        return json.load(r)


def vkey(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def central_directory(url, size):
    tail = min(size, 1 << 17)
    with http(url, size - tail) as r:
        buf = r.read()
    i = buf.rfind(b"PK\x05\x06")
    if i < 0:
        raise RuntimeError("no end of central directory")
    cd_size, cd_off = struct.unpack("<II", buf[i + 12:i + 20])
    if cd_off == 0xFFFFFFFF:
        j = buf.rfind(b"PK\x06\x06")
        cd_size, cd_off = struct.unpack("<QQ", buf[j + 40:j + 56])
    with http(url, cd_off, cd_off + cd_size - 1) as r:
        cd = r.read()
    members, p = {}, 0
    while cd[p:p + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", cd[p + 10:p + 12])
        csize, usize, nlen, xlen, clen = struct.unpack("<IIHHH", cd[p + 20:p + 34])
        off, = struct.unpack("<I", cd[p + 42:p + 46])
        name = cd[p + 46:p + 46 + nlen].decode()
        extra = cd[p + 46 + nlen:p + 46 + nlen + xlen]
        q = 0
        while q + 4 <= len(extra):  # zip64 extra field
            hid, hlen = struct.unpack("<HH", extra[q:q + 4])
            if hid == 1:
                vals = list(struct.unpack(f"<{hlen // 8}Q", extra[q + 4:q + 4 + hlen - hlen % 8]))
                if usize == 0xFFFFFFFF:
                    usize = vals.pop(0)
                if csize == 0xFFFFFFFF:
                    csize = vals.pop(0)
                if off == 0xFFFFFFFF:
                    off = vals.pop(0)
            q += 4 + hlen
        members[name] = (method, csize, usize, off)
        p += 46 + nlen + xlen + clen
    return members


def member(url, m, sink):
    method, csize, _, off = m
    with http(url, off, off + 29) as r:
        h = r.read()
    nlen, xlen = struct.unpack("<HH", h[26:30])
    start = off + 30 + nlen + xlen
    d = zlib.decompressobj(-15) if method == 8 else None
    with http(url, start, start + csize - 1) as r:
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            sink(d.decompress(chunk) if d else chunk)
    if d:
        sink(d.flush())


def small_member(url, m):
    parts = []
    member(url, m, parts.append)
    return b"".join(parts).decode("utf-8", "replace")


def fatbin_tool():
    subprocess.run(
        ["cargo", "build", "-q", "-p", "gpukb-agent", "--example", "fatbin_summary"],
        cwd=REPO, check=True,
    )
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    return os.path.join(target, "debug", "examples", "fatbin_summary")


def split_targets(summary):
    """Full targets (the arch list) and partial ones (a few kernels)."""
    counts = {}
    for t in summary["targets"]:
        img = t["image"] if "image" in t else t
        kind = img.get("kind")
        if kind not in ("sass", "ptx"):
            continue
        v = {"plain": "", "a": "a", "f": "f"}[img["variant"]]
        name = ("sm_" if kind == "sass" else "compute_") + f"{img['arch']}{v}"
        counts[(kind, name)] = counts.get((kind, name), 0) + t["count"]
    full_sass, part_sass, ptx = [], [], []
    top = max([c for (k, _), c in counts.items() if k == "sass"] or [0])
    for (kind, name), c in sorted(counts.items(), key=lambda x: (len(x[0][1]), x[0][1])):
        if kind == "ptx":
            ptx.append(name)
        elif c * 2 >= top:
            full_sass.append(name)
        else:
            part_sass.append(name)
    key = lambda s: (int(re.sub(r"\D", "", s)), s)
    return sorted(full_sass, key=key), sorted(part_sass, key=key), sorted(ptx, key=key)


def metadata_pins(text):
    req_py, pins = "", {}
    for line in text.splitlines():
        if line.startswith("Requires-Python:"):
            req_py = line.split(":", 1)[1].strip()
        if line.startswith("Requires-Dist:"):
            m = re.match(r"Requires-Dist:\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*\(?==\s*([0-9][^;,) ]*)", line)
            if m:
                pins[m.group(1).lower()] = m.group(3)
    return req_py, pins


def py_versions(files, plat):
    out = set()
    for f in files:
        m = re.match(r"torch-[^-]+-cp(\d)(\d+)-cp\d+(m?)-(manylinux[^.]*)\.whl$", f["filename"])
        if m and m.group(4).endswith(plat):
            out.add((int(m.group(1)), int(m.group(2))))
    return ";".join(f"{a}.{b}" for a, b in sorted(out))


def wheel_url(f):
    return f["url"] if "://" in f["url"] else FILES + "packages/" + f["url"].split("packages/", 1)[1]


def companions():
    """torch release -> (torchvision, torchaudio), from each companion wheel's
    METADATA (`Requires-Dist: torch==X`), read with range requests."""
    pairs = {}
    floor = {"torchvision": (0, 9, 0), "torchaudio": (0, 8, 0)}
    for pkg in ("torchvision", "torchaudio"):
        releases = pypi_json(pkg)["releases"]
        for v in sorted(releases, key=vkey):
            if not re.fullmatch(r"\d+\.\d+\.\d+", v) or vkey(v) < floor[pkg]:
                continue
            whl = [f for f in releases[v] if f["filename"].endswith(".whl") and "manylinux" in f["filename"]
                   and "x86_64" in f["filename"]]
            if not whl:
                continue
            f = whl[0]
            try:
                url = wheel_url(f)
                members = central_directory(url, f["size"])
                meta = next(n for n in members if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
                text = small_member(url, members[meta])
            except Exception as e:  # noqa: BLE001
                print(f"  {pkg} {v}: {e}", file=sys.stderr)
                continue
            m = re.search(r"^Requires-Dist:\s*torch\s*\(?==\s*([0-9.]+)", text, re.M)
            if m:
                pairs.setdefault(m.group(1), {})[pkg] = v
                continue
            # torchvision 0.29.2 says only `torch (>=2.14.0)`: it still belongs to
            # the 2.14 series (torchvision 0.N pairs with torch 2.(N-15)).
            m = re.search(r"^Requires-Dist:\s*torch\s*\(?>=\s*([0-9.]+)", text, re.M)
            if m and pkg == "torchvision":
                lo = vkey(m.group(1))
                for minor_patch in range(0, 10):
                    rel = f"2.{vkey(v)[1] - 15}.{minor_patch}"
                    if vkey(rel) >= lo:
                        pairs.setdefault("series:" + rel, {})[pkg] = v
    return pairs


def read_wheel(tool, release, f, plat, files, as_of, vision, audio):
    url = wheel_url(f)
    members = central_directory(url, f["size"])
    meta = next(n for n in members if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
    req_py, pins = metadata_pins(small_member(url, members[meta]))
    version_py = small_member(url, members["torch/version.py"]) if "torch/version.py" in members else ""
    m = re.search(r"^cuda(?:: Optional\[str\])?\s*=\s*'([0-9.]+)'", version_py, re.M)
    cuda = m.group(1) if m else ""
    sass = part = ptx = ""
    if "torch/lib/libtorch_cuda.so" in members:
        with tempfile.NamedTemporaryFile(prefix="libtorch_cuda.", suffix=".so", dir=os.environ.get("TMPDIR")) as tmp:
            member(url, members["torch/lib/libtorch_cuda.so"], tmp.write)
            tmp.flush()
            out = subprocess.run([tool, tmp.name], check=True, capture_output=True, text=True).stdout
        s, p, x = split_targets(json.loads(out))
        sass, part, ptx = ";".join(s), ";".join(p), ";".join(x)
    variant = "cu" + cuda.replace(".", "") if cuda else "cpu"
    cudnn = next((v for k, v in pins.items() if k.startswith("nvidia-cudnn")), "") if cuda else ""
    nccl = next((v for k, v in pins.items() if k.startswith("nvidia-nccl")), "") if cuda else ""
    pyvers = py_versions(files, plat)
    return {
        "release": release, "variant": variant,
        "platform": "linux-" + plat, "cuda": cuda, "python": pyvers,
        "manylinux": re.search(r"(manylinux[^.]*)_" + plat, f["filename"]).group(1),
        "sass": sass, "sass_partial": part, "ptx": ptx, "cudnn": cudnn, "nccl": nccl,
        "pypi_default": "yes",
        "index_url": f"https://download.pytorch.org/whl/{variant}",
        "torchvision": vision, "torchaudio": audio,
        "wheel": f["filename"], "sha256": f["digests"]["sha256"],
        "source": f"PyPI wheel {f['filename']} (sha256 {f['digests']['sha256']}): METADATA Requires-Python {req_py}, "
                  f"torch/version.py, libtorch_cuda.so read with gpukb's fatbin reader",
        "as_of": as_of,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="re-read only these releases")
    args = ap.parse_args()
    as_of = datetime.date.today().isoformat()
    old = {}
    if os.path.exists(OUT):
        for r in csv.DictReader(open(OUT)):
            old[(r["release"], r["variant"], r["platform"])] = r
    pairs = companions()
    for k in [k for k in pairs if k.startswith("series:")]:
        rel = k.split(":", 1)[1]
        for pkg, v in pairs.pop(k).items():
            pairs.setdefault(rel, {}).setdefault(pkg, v)
    index = pypi_json("torch")["releases"]
    releases = [v for v in index if re.fullmatch(r"\d+\.\d+\.\d+", v) and vkey(v) >= (1, 8, 0) and index[v]]
    rows = {}
    for rels, variant, plat, cuda, sass, ptx, cudnn, nccl, default, source in SCRIPTED:
        for rel in rels:
            files = index.get(rel, [])
            rows[(rel, variant, "linux-" + plat)] = {
                "release": rel, "variant": variant, "platform": "linux-" + plat, "cuda": cuda,
                "python": py_versions(files, plat) or py_versions(files, "x86_64"),
                "manylinux": "", "sass": sass, "sass_partial": "", "ptx": ptx, "cudnn": cudnn, "nccl": nccl,
                "pypi_default": "yes" if default else "",
                "index_url": f"https://download.pytorch.org/whl/{variant}",
                "torchvision": pairs.get(rel, {}).get("torchvision", ""),
                "torchaudio": pairs.get(rel, {}).get("torchaudio", ""),
                "wheel": "", "sha256": "", "source": source,
                "as_of": "2026-12-04" if "CUDA_AARCH64_ARCHES" in source else "2026-12-01",
            }
    tool = fatbin_tool()
    for rel in sorted(releases, key=vkey):
        for plat in ("x86_64", "aarch64"):
            # A CPU-only build of every release is on download.pytorch.org/whl/cpu.
            files = index[rel]
            if plat == "x86_64" or py_versions(files, plat):
                key = (rel, "cpu", "linux-" + plat)
                rows.setdefault(key, {
                    "release": rel, "variant": "cpu", "platform": "linux-" + plat, "cuda": "",
                    "python": py_versions(files, plat) or py_versions(files, "x86_64"), "manylinux": "",
                    "sass": "", "sass_partial": "", "ptx": "", "cudnn": "", "nccl": "", "pypi_default": "",
                    "index_url": "https://download.pytorch.org/whl/cpu",
                    "torchvision": pairs.get(rel, {}).get("torchvision", ""),
                    "torchaudio": pairs.get(rel, {}).get("torchaudio", ""),
                    "wheel": "", "sha256": "",
                    "source": "pytorch/test-infra generate_binary_build_matrix.py (cpu builds of every release)",
                    "as_of": "2026-12-01",
                })
            if vkey(rel) < FIRST_READ:
                continue
            cands = [f for f in files if f["filename"].endswith(f"{plat}.whl") and "-cp312-cp312-" in f["filename"]]
            if not cands:
                continue
            f = cands[0]
            prior = [r for r in old.values() if r["wheel"] == f["filename"] and r["sha256"] == f["digests"]["sha256"]]
            if prior and not (args.only and rel in args.only):
                row = dict(prior[0])
                row["torchvision"] = pairs.get(rel, {}).get("torchvision", "")
                row["torchaudio"] = pairs.get(rel, {}).get("torchaudio", "")
                if row["variant"] == "cpu":
                    row["cudnn"] = row["nccl"] = ""
            else:
                print(f"reading {f['filename']} ...", file=sys.stderr)
                row = read_wheel(tool, rel, f, plat, files, as_of,
                                 pairs.get(rel, {}).get("torchvision", ""), pairs.get(rel, {}).get("torchaudio", ""))
            key = (row["release"], row["variant"], row["platform"])
            rows[key] = row
            for k, r in list(rows.items()):  # only one PyPI default per release and platform
                if k[0] == rel and k[2] == row["platform"] and k != key:
                    r["pypi_default"] = ""
    with open(OUT, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for k in sorted(rows, key=lambda k: (vkey(k[0]), k[2], k[1])):
            w.writerow(rows[k])
    print(f"wrote {len(rows)} rows to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
