#!/usr/bin/env python3
"""Regenerates agent/facts/data/gpus.csv (GPU product -> compute capability)
and agent/facts/data/gpu_pci_ids.csv (PCI device id -> product), the tables
`gpukb plan --gpu NAME|CC|PCI-ID` resolves names with.

Inputs:
* shared/research/data/gpus.csv: NVIDIA "CUDA GPU Compute Capability" and
  "Legacy CUDA GPU Compute Capability" pages, transcribed with sources.
* a pci.ids file (the PCI ID Repository), for the device ids: from a clone
  of github.com/pciutils/pciids, `git show HEAD:pci.ids > pci.ids` (the table
  was made from commit c1c12547, 2026-08-22).

Usage: regen_gpus.py RESEARCH_GPUS_CSV PCI_IDS PCI_IDS_VERSION
"""

import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Names in the research table that carry variants in parentheses.
RENAME = {
    "A100 (40GB/80GB, PCIe/SXM)": ("A100", "A100 PCIe;A100 SXM4;A100-SXM4-40GB;A100-SXM4-80GB;A100 80GB PCIe"),
    "H100 (PCIe/SXM/NVL)": ("H100", "H100 PCIe;H100 SXM5;H100 NVL;H100 80GB HBM3"),
    # The Jetson aliases "Tegra X1", "Tegra X2", "Xavier", "Orin" are the names
    # CUDA reports for those GPUs (cudaDeviceProp.name, as llama.cpp/ggml logs
    # print them: "Device 0: NVIDIA Tegra X1, compute capability 5.3").
    "Jetson TX2 (TX2/TX2 NX/TX2i)": ("Jetson TX2", "TX2;TX2 NX;TX2i;Tegra X2"),
    "Jetson Nano": ("Jetson Nano", "Tegra X1"),
    "Jetson AGX Xavier": ("Jetson AGX Xavier", "Xavier"),
    "Jetson AGX Orin": ("Jetson AGX Orin", "Orin"),
    "Jetson AGX Thor (T5000)": ("Jetson AGX Thor", "Thor;T5000"),
    "DGX Spark (GB10)": ("DGX Spark", "GB10"),
    "Quadro P4000 (Quadro P-series)": ("Quadro P4000", ""),
    "NVIDIA TITAN X (Pascal)": ("NVIDIA TITAN X Pascal", "TITAN X (Pascal)"),
    "RTX A3000 (laptop)": ("RTX A3000 Laptop GPU", "RTX A3000"),
    "Tesla V100": ("Tesla V100", "V100;Tesla V100-SXM2-16GB;Tesla V100-SXM2-32GB;Tesla V100-PCIE-16GB;Tesla V100-PCIE-32GB;V100S"),
}
# Rows the research table lacks (same sources: NVIDIA's compute-capability pages).
EXTRA = [
    ("Tesla K40", "", "Kepler", "3.5", "Datacenter", "NVIDIA 'Legacy CUDA GPU Compute Capability' https://developer.nvidia.com/cuda-legacy-gpus", "primary"),
    ("GeForce GTX TITAN X", "", "Maxwell", "5.2", "GeForce", "NVIDIA 'Legacy CUDA GPU Compute Capability' https://developer.nvidia.com/cuda-legacy-gpus", "primary"),
    ("GeForce GTX 980 Ti", "", "Maxwell", "5.2", "GeForce", "NVIDIA 'Legacy CUDA GPU Compute Capability' https://developer.nvidia.com/cuda-legacy-gpus", "primary"),
    ("GeForce GTX 750 Ti", "", "Maxwell", "5.0", "GeForce", "NVIDIA 'Legacy CUDA GPU Compute Capability' https://developer.nvidia.com/cuda-legacy-gpus", "primary"),
]


def segment_class(seg, name):
    s = seg.lower()
    if "jetson" in s:
        return "jetson"
    if "datacenter" in s:
        return "datacenter"
    if name.startswith(("RTX PRO", "RTX A", "RTX 6000", "RTX 5000", "RTX 4500", "RTX 4000", "Quadro")):
        return "workstation"
    return "geforce"


# pci.ids chip-code prefix -> the architecture it names. A device whose chip
# contradicts the product its marketing name matches is left out: pci.ids names
# 10de:11c7 "GK106 [GeForce GTX 750 Ti]" (a Kepler GK106, CC 3.0), and the
# GeForce GTX 750 Ti row is the Maxwell GM107 (CC 5.0) (kb-audit E4).
CHIP_ARCH = {"GK": "Kepler", "GM": "Maxwell", "GP": "Pascal", "GV": "Volta", "TU": "Turing",
             "GA": "Ampere", "AD": "Ada", "GH": "Hopper", "GB": "Blackwell"}


def chip_agrees(pci_text, architecture):
    arch = CHIP_ARCH.get(pci_text[:2]) if pci_text[2:3].isdigit() else None
    return arch is None or architecture.startswith(arch)


def main():
    research, pci_ids, pci_version = sys.argv[1:4]
    rows = []
    for r in csv.DictReader(open(research)):
        name, aliases = RENAME.get(r["gpu"], (r["gpu"], ""))
        rows.append({
            "name": name, "aliases": aliases, "architecture": r["architecture"],
            "cc": r["compute_capability"], "class": segment_class(r["segment"], name),
            "source": r["source"], "verified": r["verified"],
        })
    for name, aliases, arch, cc, seg, src, ver in EXTRA:
        rows.append({"name": name, "aliases": aliases, "architecture": arch, "cc": cc,
                     "class": segment_class(seg, name), "source": src, "verified": ver})
    with open(os.path.join(HERE, "gpus.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["name", "aliases", "architecture", "cc", "class", "source", "verified"],
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    def norm(s):
        return re.sub(r"[^a-z0-9]+", " ", s.lower().replace("geforce", "").replace("nvidia", "").replace("tesla", "")).strip()

    names = {}
    for r in rows:
        for n in [r["name"]] + [a for a in r["aliases"].split(";") if a]:
            names.setdefault(norm(n), r["name"])
    arch_of = {r["name"]: r["architecture"] for r in rows}
    out, vendor = [], False
    for line in open(pci_ids, encoding="utf-8", errors="replace"):
        if line.startswith("10de "):
            vendor = True
            continue
        if vendor and re.match(r"^[0-9a-f]{4} ", line):
            break
        m = re.match(r"^\t([0-9a-f]{4})\s+(.*)$", line.rstrip("\n")) if vendor else None
        if not m:
            continue
        dev, text = m.groups()
        inner = re.search(r"\[(.*)\]", text)
        label = inner.group(1) if inner else text
        for cand in [label] + label.split(" / "):
            key = norm(cand)
            key2 = re.sub(r" (\d+gb|pcie|sxm\d?|nvl|hbm\d e?|mobile|laptop gpu|max q|lite hash rate)\b.*$", "", key)
            gpu = names.get(key) or names.get(key2)
            if gpu and not chip_agrees(text.strip(), arch_of[gpu]):
                print(f"10de:{dev} {text.strip()!r}: chip contradicts {gpu} ({arch_of[gpu]}); left out", file=sys.stderr)
                break
            if gpu:
                out.append({"pci_id": f"10de:{dev}", "pci_name": text.strip(), "gpu": gpu,
                            "source": f"PCI ID Repository pci.ids {pci_version}"})
                break
    with open(os.path.join(HERE, "gpu_pci_ids.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["pci_id", "pci_name", "gpu", "source"], lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"{len(rows)} GPUs, {len(out)} PCI ids", file=sys.stderr)


if __name__ == "__main__":
    main()
