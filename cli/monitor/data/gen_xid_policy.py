#!/usr/bin/env python3
"""Writes xid_policy.csv from the KB's transcription of NVIDIA's Xid catalogue
(kb/tables/xid.csv) and the policy rules below. Run from the repository root:
    python3 cli/monitor/data/gen_xid_policy.py > cli/monitor/data/xid_policy.csv
Every row keeps the catalogue's Immediate Action; `class` is gpukb's policy,
`basis` says which rule gave it, `dcgm_class` is DCGM's health-watch class where
DCGM classifies the Xid (NVIDIA/DCGM testing/TestHealthMonitor.cpp,
m_devastatingXids and m_subsystemXids)."""
import csv, sys

CATALOGUE = ("NVIDIA Xid Catalog https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html "
             "(under https://docs.nvidia.com/deploy/xid-errors/; transcribed in kb/tables/xid.csv as of 2026-11-30)")
DCGM = "NVIDIA/DCGM testing/TestHealthMonitor.cpp"
# DCGM: devastating Xids fail every watch; subsystem Xids warn (63 is listed twice).
DCGM_CLASS = {x: "fail" for x in (48, 74, 79, 94, 95, 119, 120, 140)}
for x in (31, 32, 43, 64, 38, 39, 42, 60, 61, 62, 54, 56, 57, 58, 78, 67, 73, 121, 137, 93):
    DCGM_CLASS[x] = "warn"
DCGM_CLASS[63] = "warn (MEM, pending page retirement); fail (THERMAL, 'Thermal diode detects short')"

# Issue 22's policy, where it overrides the rule from the Immediate Action.
OVERRIDE = {
    48: ("fail", "issue 22: drain (catalogue WORKFLOW_XID_48: solo RESET_GPU, with 63/64 drain and reset; DCGM devastating)"),
    74: ("fail", "issue 22: drain (catalogue WORKFLOW_NVLINK_ERR: reset or reboot clears it; DCGM devastating)"),
    63: ("warn", "issue 22: row remap pending, reset the GPU when idle (catalogue IGNORE)"),
    92: ("warn", "issue 22: high single-bit ECC rate (catalogue IGNORE)"),
    94: ("warn", "issue 22: contained memory error, reset the GPU when idle (catalogue RESTART_APP; DCGM fails it)"),
    45: ("application", "issue 22: alone an application's teardown (catalogue WORKFLOW_XID_45: not solo, follow the other Xid)"),
    154: ("by_recovery_action", "the recovery action it carries: 1,2,4,6,7 fail; 3,5 warn; 0 none (NVML nvmlDeviceGpuRecoveryAction_t)"),
}

def rule(action, desc):
    if action == "RESET_GPU":
        return "fail", "catalogue RESET_GPU"
    if action in ("RESTART_BM", "RESTART_VM"):
        return "fail", f"catalogue {action}"
    if action == "CHECK_MECHANICALS":
        return "fail", "catalogue CHECK_MECHANICALS (someone must check the hardware)"
    if action in ("RESTART_APP", "IGNORE"):
        return "application", f"catalogue {action}: the node needs nothing"
    if action == "WORKFLOW_NVLINK5_ERR":
        return "warn", "catalogue WORKFLOW_NVLINK5_ERR: severity in the message; a required recovery comes as Xid 154"
    if action == "CONTACT_SUPPORT" and desc.startswith("Unused"):
        return "warn", "catalogue: unused on Ampere and newer, CONTACT_SUPPORT if seen"
    if action:
        return "warn", f"catalogue {action}"
    return "warn", "the catalogue gives no Immediate Action"

def clears(action, xid):
    if xid == 79 or action in ("RESTART_BM",):
        return "reboot"
    if action == "RESTART_VM":
        return "vm_restart"
    if action in ("RESET_GPU", "WORKFLOW_XID_48", "WORKFLOW_NVLINK_ERR") or xid in (63, 94):
        return "reset"
    return ""

w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["xid", "mnemonic", "class", "clears", "immediate_action", "dcgm_class", "basis", "source"])
for r in csv.DictReader(open("kb/tables/xid.csv")):
    x = int(r["xid"])
    action = r["immediate_action"].strip()
    cls, basis = OVERRIDE.get(x) or rule(action, r["description"])
    src = CATALOGUE
    if x in DCGM_CLASS:
        src += " ; " + DCGM
    if x == 154:
        src += " ; NVML nvmlDeviceGpuRecoveryAction_t https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html"
    w.writerow([x, r["mnemonic"], cls, clears(action, x), action or "(none given)", DCGM_CLASS.get(x, ""), basis, src])
