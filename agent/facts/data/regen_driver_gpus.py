#!/usr/bin/env python3
"""Regenerates agent/facts/data/nvidia_driver_gpus.csv: NVIDIA PCI device id ->
the driver's name for it, whether the open kernel modules drive it
(`kernelopen`), whether the proprietary modules still do on a GSP GPU
(`gsp_proprietary_supported`), its legacy branch (`legacybranch`, the last
branch that drives it), and the chip code of its pci.ids name (GK106, GP102,
TU102, GB100...), from which gpukb reads the GPU's generation.

Inputs:
* NVIDIA's supported-gpus.json, the table NVIDIA's installer and
  nvidia-driver-assistant read. The table was made from the copy in NVIDIA's
  nvidia-driver-assistant_0.23.48.01-1_all.deb (built 2025-12-08 with driver
  590.48.01), https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/
  (deb sha256 63b7eb75805530914f723213af8ec6070089d60782bece179dd6fc22caf914a9,
  the checksum Manjaro's PKGBUILD pins for that URL;
  usr/share/nvidia-driver-assistant/supported-gpus/supported-gpus.json
  sha256 02fb4c539a03a652b7b7ca2dbd42968c0aea2daf9fb96709524d6ced3e6ed9da).
  The same file ships in every driver .run as supported-gpus/supported-gpus.json.
* a pci.ids file (the PCI ID Repository), for chip codes of ids NVIDIA's
  file does not list: `git show HEAD:pci.ids` of github.com/pciutils/pciids
  (commit c1c12547, 2026-08-22).

One row per device id: a device id NVIDIA lists only with subsystem ids
(0x1EB8 Tesla T4) takes its first entry's name; the generator stops if the
entries of one device id disagree on kernelopen or legacybranch.

Usage: regen_driver_gpus.py SUPPORTED_GPUS_JSON PCI_IDS
"""

import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_JSON = "supported-gpus.json 590.48.01"

SOURCE_PCI = "pci.ids c1c1254"
CHIP = re.compile(r"^(G[0-9]{2,3}|G[FKMPV][0-9]{3}[A-Z]*|T[U][0-9]{3}[A-Z]*|G[AHB][0-9]{2,3}[A-Z]*|AD[0-9]{3}[A-Z]*|NV[0-9A-F]+|GT[0-9]{3}[A-Z]*)\b")


def nvidia_pci_names(path):
    names = {}
    vendor = None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith("\t"):
            vendor = line.split()[0].lower()
            continue
        if vendor != "10de" or line.startswith("\t\t"):
            continue
        dev, name = line.strip().split(None, 1)
        names[int(dev, 16)] = name.strip()
    return names


def main():
    json_path, pci_ids = sys.argv[1:3]
    chips = json.load(open(json_path))["chips"]
    pci = nvidia_pci_names(pci_ids)
    rows = {}
    for c in chips:
        dev = int(c["devid"], 16)
        kernelopen = "kernelopen" in c.get("features", [])
        gsp_prop = "gsp_proprietary_supported" in c.get("features", [])
        legacy = (c.get("legacybranch") or "").replace(".xx", "")
        row = rows.get(dev)
        if row is None:
            rows[dev] = {"name": c["name"], "kernelopen": kernelopen, "gsp_proprietary": gsp_prop,
                         "legacybranch": legacy, "subsystem_only": "subdevid" in c}
            continue
        if (row["kernelopen"], row["legacybranch"]) != (kernelopen, legacy):
            sys.exit("device 0x%04x: entries disagree (%s / %s)" % (dev, row, c))
        if row["subsystem_only"] and "subdevid" not in c:
            row["name"] = c["name"]
            row["subsystem_only"] = False
    out = []
    for dev in sorted(set(rows) | set(pci)):
        r = rows.get(dev)
        pci_name = pci.get(dev, "")
        m = CHIP.match(pci_name)
        chip = m.group(1) if m else ""
        if r is None and not chip:
            continue  # neither NVIDIA's table nor a chip code: nothing to say
        out.append({
            "pci_id": "10de:%04x" % dev,
            "nvidia_name": r["name"] if r else "",
            "kernelopen": ("yes" if r["kernelopen"] else "no") if r else "",
            "gsp_proprietary": ("yes" if r["gsp_proprietary"] else "no") if r else "",
            "legacybranch": r["legacybranch"] if r else "",
            "pci_name": pci_name,
            "chip": chip,
            "source": "; ".join(s for s, have in ((SOURCE_JSON, r), (SOURCE_PCI, pci_name)) if have),
        })
    with open(os.path.join(HERE, "nvidia_driver_gpus.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print("%d rows (%d in NVIDIA's table)" % (len(out), sum(1 for o in out if o["nvidia_name"])))


if __name__ == "__main__":
    main()
