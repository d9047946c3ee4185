#!/usr/bin/env python3
"""Regenerates kernels/artifacts/ from kernels/cuda/*.cu with no GPU.

Called by regen.sh, which installs the pinned NVIDIA wheels first:
  NVRTC 12.9 (libnvrtc.so.12)  CUDA C -> PTX for each compute_XX
  ptxas 12.9                     PTX -> cubin for each sm_XX
CUDA 12.9 is the newest toolkit that still targets sm_53..sm_72 (CUDA 13 dropped
Maxwell, Pascal and Volta), and already targets sm_100 and sm_120.

Writes, for ARCHS:
  gpukb_probe.compute_XX.ptx   NVRTC output (.version 8.8, .target sm_XX); compute_53 is
                               lowered to LOW_ISA (see below)
  gpukb_probe.sm_XX.cubin      ptxas -arch=sm_XX of compute_XX.ptx
  gpukb_probe.future.ptx       compute_53 PTX with `.version 9.9`: no driver knows that ISA,
                               so loading it must fail with 222 CUDA_ERROR_UNSUPPORTED_PTX_VERSION
  MANIFEST                     sha256 of every source and artifact, plus tool versions
"""
import ctypes
import hashlib
import os
import re
import subprocess
import sys

ARCHS = [53, 62, 72, 75, 80, 86, 87, 89, 90, 100, 120]
# The PTX NVRTC 12.9 emits says `.version 8.8`, which a driver older than CUDA 12.9
# refuses (222). The kernels use only plain PTX, so the compute_53 PTX is re-labelled
# with an old ISA version; ptxas then re-checks every instruction against that
# version (it rejects features newer than the declared ISA), so a clean ptxas run
# proves the label is honest. ISA 5.0 = CUDA 8.0: JIT-able by every driver that
# supports sm_53 (Jetson Nano / TX1 on JetPack 3+) and anything newer.
LOW_ISA = "5.0"
FUTURE_ISA = "9.9"
NAME = "gpukb_probe"

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.join(HERE, "cuda")
OUT_DIR = os.path.join(HERE, "artifacts")


def die(msg):
    sys.stderr.write("regen: " + msg + "\n")
    sys.exit(1)


def nvrtc_ptx(lib, src, arch):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"probe.cu", 0, None, None)
    if rc != 0:
        die("nvrtcCreateProgram rc=%d" % rc)
    opts = [
        b"--gpu-architecture=compute_%d" % arch,
        b"--include-path=" + SRC_DIR.encode(),
        b"--std=c++11",
    ]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    log_size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        die("NVRTC compute_%d failed (rc=%d):\n%s" % (arch, rc, log.value.decode()))
    size = ctypes.c_size_t()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.value.decode()


def set_version(ptx, isa):
    new, n = re.subn(r"(?m)^\.version \d+\.\d+$", ".version " + isa, ptx)
    if n != 1:
        die("expected exactly one .version line")
    return new


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    nvrtc_path, ptxas = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(nvrtc_path)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    ptxas_ver = subprocess.run([ptxas, "--version"], check=True, capture_output=True, text=True).stdout
    ptxas_ver = [l for l in ptxas_ver.splitlines() if l.startswith("Cuda compilation tools")][0]

    with open(os.path.join(SRC_DIR, "probe.cu"), "rb") as f:
        src = f.read()
    os.makedirs(OUT_DIR, exist_ok=True)
    for arch in ARCHS:
        ptx = nvrtc_ptx(lib, src, arch)
        if arch == ARCHS[0]:
            ptx = set_version(ptx, LOW_ISA)
            with open(os.path.join(OUT_DIR, "%s.future.ptx" % NAME), "w") as f:
                f.write(set_version(ptx, FUTURE_ISA))
        ptx_path = os.path.join(OUT_DIR, "%s.compute_%d.ptx" % (NAME, arch))
        with open(ptx_path, "w") as f:
            f.write(ptx)
        cubin = os.path.join(OUT_DIR, "%s.sm_%d.cubin" % (NAME, arch))
        subprocess.run([ptxas, "-arch=sm_%d" % arch, "-O3", "-o", cubin, ptx_path], check=True)

    lines = [
        "# gpukb-kernels artifacts manifest, written by kernels/regen.sh; checked by kernels/tests.",
        "# nvrtc %d.%d; ptxas: %s" % (major.value, minor.value, ptxas_ver),
        "# low_isa %s future_isa %s" % (LOW_ISA, FUTURE_ISA),
    ]
    for d, rel in [(HERE, "regen.sh"), (HERE, "regen.py")]:
        lines.append("%s  %s" % (sha256(os.path.join(d, rel)), rel))
    for fn in sorted(os.listdir(SRC_DIR)):
        lines.append("%s  cuda/%s" % (sha256(os.path.join(SRC_DIR, fn)), fn))
    for fn in sorted(os.listdir(OUT_DIR)):
        if fn == "MANIFEST":
            continue
        lines.append("%s  artifacts/%s" % (sha256(os.path.join(OUT_DIR, fn)), fn))
    with open(os.path.join(OUT_DIR, "MANIFEST"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
