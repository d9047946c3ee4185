#!/usr/bin/env python3
"""The H200 lab's program and helpers (see tests/live/README.md).

Modes:
  run --mode torch|ext|oom|assert    the real PyTorch program: import torch, one conv (cuDNN), one
                                     matmul (cuBLAS), a 1-rank NCCL all-reduce, then the mode's
                                     extra step; samples /proc/self/maps and the loader's link map and
                                     prints one `LAB_RESULT {json}` line (also on failure, with the
                                     error text and the traceback's tail).
  predicted FINGERPRINT TORCH_FILE   gpukb's predicted loads (torch.loads[] of the torch that was
                                     imported, plus its libcuda view), each with the realpath of the
                                     predicted path and its DT_SONAME on this machine: JSON on stdout.
  search-text CASE_DIR               the text a user would paste: the error's last lines plus any
                                     device-side `Assertion ... failed` line the program printed.
  lddebug CASE_DIR                   the loader's own search (LD_DEBUG=libs) for the NVIDIA libraries.
  trim CASE_DIR                      small copies of doctor/search JSON (*.min.json) for the record.

Only the standard library outside `run`; `run` imports torch.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import traceback

MARK = "LAB_RESULT "


# ---------------------------------------------------------------- ELF reading (no dependencies)

def elf_dynamic(path):
    """DT_SONAME, DT_RPATH, DT_RUNPATH and DT_NEEDED of a 64-bit little-endian ELF, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if len(h) < 64 or h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
                return None
            phoff = struct.unpack_from("<Q", h, 32)[0]
            phentsize, phnum = struct.unpack_from("<HH", h, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
            loads, dyn = [], None
            for i in range(phnum):
                p_type, _fl, off, vaddr, _pa, filesz, _mem, _al = struct.unpack_from(
                    "<IIQQQQQQ", ph, i * phentsize)
                if p_type == 1:
                    loads.append((vaddr, off, filesz))
                elif p_type == 2:
                    dyn = (off, filesz)
            if dyn is None:
                return {}
            f.seek(dyn[0])
            d = f.read(dyn[1])
            tags = {}
            needed = []
            strtab = None
            for j in range(0, len(d) - 15, 16):
                tag, val = struct.unpack_from("<qQ", d, j)
                if tag == 0:
                    break
                if tag == 5:
                    strtab = val
                elif tag == 1:
                    needed.append(val)
                elif tag in (14, 15, 29):
                    tags[tag] = val
            if strtab is None:
                return {}
            base = None
            for va, off, sz in loads:
                if va <= strtab < va + sz:
                    base = strtab - va + off
            if base is None:
                return {}

            def s(v):
                f.seek(base + v)
                raw = f.read(4096)
                return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

            out = {"needed": [s(v) for v in needed]}
            for tag, key in ((14, "soname"), (15, "rpath"), (29, "runpath")):
                if tag in tags:
                    out[key] = s(tags[tag])
            return out
    except OSError:
        return None


def is_shared_object(path):
    base = os.path.basename(path)
    return ".so" in base and not base.endswith(".py")


def maps_libs():
    """Each file-backed shared object in /proc/self/maps: path (as the kernel names the mapped
    file, i.e. resolved), realpath, DT_SONAME, and RPATH/RUNPATH for the interesting ones."""
    seen = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6:
                continue
            p = parts[5].strip()
            if p.endswith(" (deleted)"):
                p = p[: -len(" (deleted)")]
            if p.startswith("/") and is_shared_object(p) and p not in seen:
                seen.append(p)
    out = []
    for p in seen:
        dyn = elf_dynamic(p) or {}
        rec = {"path": p, "realpath": os.path.realpath(p), "soname": dyn.get("soname")}
        for k in ("rpath", "runpath"):
            if k in dyn:
                rec[k] = dyn[k]
        out.append(rec)
    return out


def link_map_names():
    """The names the dynamic loader itself recorded (l_name of each link_map entry), in load
    order: the path it opened, before symlinks are resolved."""
    try:
        import ctypes

        class LinkMap(ctypes.Structure):
            pass

        LinkMap._fields_ = [
            ("l_addr", ctypes.c_size_t),
            ("l_name", ctypes.c_char_p),
            ("l_ld", ctypes.c_void_p),
            ("l_next", ctypes.POINTER(LinkMap)),
            ("l_prev", ctypes.POINTER(LinkMap)),
        ]
        libc = ctypes.CDLL("libc.so.6")
        main = ctypes.CDLL(None)
        lm = ctypes.POINTER(LinkMap)()
        if libc.dlinfo(ctypes.c_void_p(main._handle), 2, ctypes.byref(lm)) != 0:
            return {"error": "dlinfo failed"}
        names = []
        while lm:
            n = lm.contents.l_name
            if n:
                names.append(n.decode("utf-8", "replace"))
            lm = lm.contents.l_next
        return names
    except Exception as e:  # noqa: BLE001 - the record says what went wrong
        return {"error": repr(e)}


# ---------------------------------------------------------------- the real program

def step_cuda(torch):
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    return {"device_count": torch.cuda.device_count(), "name": torch.cuda.get_device_name(0),
            "x": float(x.sum())}


def step_conv(torch):
    import torch.nn.functional as F
    torch.backends.cudnn.enabled = True
    x = torch.randn(2, 3, 32, 32, device="cuda")
    w = torch.randn(8, 3, 3, 3, device="cuda")
    y = F.conv2d(x, w, padding=1)
    torch.cuda.synchronize()
    return {"shape": list(y.shape), "cudnn": torch.backends.cudnn.version()}


def step_matmul(torch):
    a = torch.randn(256, 256, device="cuda")
    b = torch.randn(256, 256, device="cuda")
    c = a @ b
    torch.cuda.synchronize()
    return {"sum_finite": bool(torch.isfinite(c).all())}


def step_nccl(torch):
    import datetime
    import torch.distributed as dist
    fd, path = tempfile.mkstemp(prefix="lab-nccl-")
    os.close(fd)
    os.unlink(path)
    dist.init_process_group("nccl", init_method="file://" + path, rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=30))
    try:
        t = torch.ones(4, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        return {"all_reduce": t.tolist(), "nccl": list(torch.cuda.nccl.version())}
    finally:
        dist.destroy_process_group()


def step_oom(torch):
    total = torch.cuda.get_device_properties(0).total_memory
    x = torch.empty(int(total * 1.5), dtype=torch.uint8, device="cuda")
    return {"allocated": x.numel()}


def step_assert(torch):
    x = torch.zeros(10, device="cuda")
    idx = torch.tensor([100], device="cuda")
    y = x[idx]
    torch.cuda.synchronize()
    return {"y": y.tolist()}


EXT_SETUP = """
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="lab_ext", ext_modules=[CUDAExtension("lab_ext", ["lab_ext.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""
EXT_CU = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"


def step_ext(torch):
    """Build a CUDA extension the way a user's setup.py does (BuildExtension checks the toolkit at
    CUDA_HOME against torch's CUDA before compiling)."""
    import importlib.util
    if importlib.util.find_spec("setuptools") is None:
        from torch.utils import cpp_extension as ce
        from torch.torch_version import TorchVersion
        ce._check_cuda_version("c++", TorchVersion("13.3.0"))
        return {"how": "_check_cuda_version (no setuptools)", "cuda_home": ce.CUDA_HOME}
    d = tempfile.mkdtemp(prefix="lab-ext-")
    with open(os.path.join(d, "setup.py"), "w") as f:
        f.write(EXT_SETUP)
    with open(os.path.join(d, "lab_ext.cu"), "w") as f:
        f.write(EXT_CU)
    p = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=d,
                       capture_output=True, text=True, timeout=45)
    text = (p.stdout + p.stderr).rstrip()
    if p.returncode != 0:
        raise ExtBuildFailed(text)
    return {"how": "setup.py build_ext", "tail": text.splitlines()[-5:]}


class ExtBuildFailed(Exception):
    """setup.py build_ext failed; the message is its output."""


def error_record(step, e):
    header = "".join(traceback.format_exception_only(type(e), e)).strip()
    if isinstance(e, ExtBuildFailed):
        lines = str(e).splitlines()
        idx = max((i for i, line in enumerate(lines)
                   if re.match(r"^[\w.]*(Error|Exception)\b.*:", line)), default=None)
        header = "\n".join(lines[idx:] if idx is not None else lines[-8:]).strip()
    tb = traceback.format_exc().splitlines()
    return {"step": step, "type": type(e).__name__, "header": header[:4000],
            "traceback_tail": tb[-40:]}


def cmd_run(mode):
    result = {"mode": mode, "pid": os.getpid(), "steps": {}, "error": None,
              "env": {k: os.environ.get(k) for k in (
                  "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES", "CUDA_HOME")}}
    t0 = time.time()
    steps = [("cuda", step_cuda), ("conv", step_conv), ("matmul", step_matmul),
             ("nccl", step_nccl)]
    steps += {"torch": [], "ext": [("ext", step_ext)], "oom": [("oom", step_oom)],
              "assert": [("assert", step_assert)]}[mode]
    torch = None
    try:
        import torch  # noqa: F811
        result["torch"] = {"version": torch.__version__, "file": torch.__file__,
                           "cuda": torch.version.cuda}
        for name, fn in steps:
            try:
                result["steps"][name] = fn(torch)
            except BaseException as e:  # noqa: BLE001 - the failure is the measurement
                result["error"] = error_record(name, e)
                break
    except BaseException as e:  # noqa: BLE001
        result["error"] = error_record("import", e)
    result["seconds"] = round(time.time() - t0, 2)
    result["maps"] = maps_libs()
    result["link_map"] = link_map_names()
    sys.stdout.flush()
    print(MARK + json.dumps(result), flush=True)
    os._exit(0 if result["error"] is None else 1)


# ---------------------------------------------------------------- helpers on gpukb's output

def pick_torch_env(fp, torch_file):
    envs = fp.get("python") or []
    best = None
    for e in envs:
        if not isinstance(e, dict) or not e.get("torch"):
            continue
        sp = e.get("site_packages") or ""
        if torch_file and sp and torch_file.startswith(sp.rstrip("/") + "/"):
            return e
        best = best or e
    return best


def libcuda_view(fp):
    """gpukb's answer to 'which libcuda.so.1 does the process load': driver.libcuda.process when
    the fingerprint has it (issue 20 item 4), else the copy gpukb itself loaded."""
    lc = ((fp.get("driver") or {}).get("libcuda") or {})
    val = lc.get("value") if isinstance(lc, dict) else None
    if not isinstance(val, dict):
        return None, "driver.libcuda: " + str(lc.get("status") if isinstance(lc, dict) else lc)
    proc = val.get("process")
    if isinstance(proc, dict):
        inner = proc.get("value", proc)
        if isinstance(inner, dict) and (inner.get("path") or inner.get("real_path")):
            return inner, "driver.libcuda.process"
    return val, "driver.libcuda (gpukb's own copy)"


def cmd_predicted(fp_path, torch_file):
    out = {"fingerprint": fp_path, "loads": [], "libcuda": None, "notes": []}
    try:
        with open(fp_path) as f:
            fp = json.load(f)
    except (OSError, ValueError) as e:
        out["notes"].append(f"no fingerprint: {e}")
        print(json.dumps(out, indent=1))
        return
    env = pick_torch_env(fp, torch_file)
    if env is None:
        out["notes"].append("the fingerprint has no torch environment")
    else:
        out["site_packages"] = env.get("site_packages")
        loads = (env.get("torch") or {}).get("loads")
        if isinstance(loads, dict):  # an Observed<...> wrapper
            out["loads_status"] = loads.get("status")
            loads = loads.get("value")
        for ld in loads or []:
            p = ld.get("path")
            rec = dict(ld)
            if p:
                rec["realpath"] = os.path.realpath(p)
                rec["exists"] = os.path.exists(p)
                rec["elf_soname"] = (elf_dynamic(p) or {}).get("soname")
            out["loads"].append(rec)
    lc, src = libcuda_view(fp)
    if lc is not None:
        p = lc.get("path") or lc.get("real_path")
        out["libcuda"] = {"soname": lc.get("soname") or "libcuda.so.1", "path": p,
                          "realpath": os.path.realpath(p) if p else None,
                          "version": lc.get("version"), "via": lc.get("found_via") or lc.get("rule"),
                          "from": src}
    else:
        out["notes"].append(src)
    print(json.dumps(out, indent=1))


def read_result(case_dir):
    try:
        with open(os.path.join(case_dir, "program.out"), errors="replace") as f:
            text = f.read()
    except OSError:
        return None, ""
    rec = None
    for line in text.splitlines():
        if line.startswith(MARK):
            try:
                rec = json.loads(line[len(MARK):])
            except ValueError:
                pass
    return rec, text


LIB_OF_INTEREST = re.compile(r"lib(cuda|cudart|cudnn\w*|nccl|cublas\w*|cufft|curand|cusparse\w*|cusolver"
                             r"|nvJitLink|nvrtc|nvidia-ml|cupti|nvshmem\w*|cufile)\.so")


def cmd_lddebug(case_dir):
    """Keeps, of the loader's LD_DEBUG=libs log (LD_DEBUG_OUTPUT=CASE_DIR/lddebug.raw.PID), the
    search of each NVIDIA library: `find library=`, its search paths (cut to 400 characters), the
    last file tried (the one opened, when the search succeeded) and `calling init` of the objects."""
    keep = []
    for name in sorted(os.listdir(case_dir)):
        if not name.startswith("lddebug.raw"):
            continue
        pid = name[len("lddebug.raw."):]
        on, last_try = False, None
        path = os.path.join(case_dir, name)
        with open(path, errors="replace") as f:
            for line in f:
                body = line.split(":", 1)[-1].strip()
                if body.startswith("trying file="):
                    last_try = body
                    continue
                if last_try and on:
                    keep.append(f"{pid}: {last_try}")
                last_try = None
                if body.startswith("find library="):
                    on = bool(LIB_OF_INTEREST.search(body))
                elif not body.startswith("search "):
                    on = False
                if on or (body.startswith("calling init") and LIB_OF_INTEREST.search(body)):
                    keep.append(f"{pid}: {body[:400]}")
        os.unlink(path)
    with open(os.path.join(case_dir, "lddebug.txt"), "w") as f:
        f.write("\n".join(keep[:3000]) + "\n")


def cmd_search_text(case_dir):
    """What a user would paste: the error lines, plus a device-side assertion line."""
    rec, text = read_result(case_dir)
    err = (rec or {}).get("error")
    parts = []
    for line in text.splitlines():
        if "Assertion" in line and "failed" in line and line not in parts:
            parts.append(line.strip())
            break
    if err:
        parts.append(err["header"])
    elif rec is None:
        # not the torch program (the nvcc binary) or it died before printing: its last lines
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(MARK)]
        parts.extend(lines[-6:])
    sys.stdout.write("\n".join(parts).strip()[:3000])


def trim_doctor(d):
    return {
        "verdict": d.get("verdict"), "summary": d.get("summary"),
        "findings": [{k: f.get(k) for k in ("id", "check", "title", "severity", "root_cause",
                                            "explained_by", "category", "kb_entries")}
                     for f in d.get("findings") or []],
        "checks": d.get("checks"),
        "layers": [{"layer": ly.get("layer"), "status": ly.get("status"),
                    "evidence": [ev.get("fact") if isinstance(ev, dict) else ev
                                 for ev in ly.get("evidence") or []][:8]}
                   for ly in d.get("layers") or []],
    }


def trim_hit(h):
    m = h.get("machine")
    return {"id": h.get("id"), "score": h.get("score"), "confidence": h.get("confidence"),
            "matched": (h.get("matched") or [])[:6], "machine": m}


def trim_search(s):
    return {"query": (s.get("query") or "")[:600], "facts": s.get("facts"),
            "results": [trim_hit(h) for h in s.get("results") or []],
            "ruled_out": [trim_hit(h) for h in s.get("ruled_out") or []],
            "undecided_checks": s.get("undecided_checks")}


def cmd_trim(case_dir):
    for name, fn in (("doctor.json", trim_doctor), ("search.json", trim_search),
                     ("search-text-only.json", trim_search)):
        p = os.path.join(case_dir, name)
        try:
            with open(p) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            d = None
            small = {"unreadable": str(e)}
        if d is not None:
            try:
                small = fn(d)
            except (AttributeError, TypeError) as e:
                small = {"unreadable": f"unexpected shape: {e}"}
        with open(p.replace(".json", ".min.json"), "w") as f:
            json.dump(small, f, indent=1)


def main(argv):
    if len(argv) >= 3 and argv[1] == "run" and argv[2] == "--mode":
        cmd_run(argv[3] if len(argv) > 3 else "torch")
    elif len(argv) == 4 and argv[1] == "predicted":
        cmd_predicted(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "search-text":
        cmd_search_text(argv[2])
    elif len(argv) == 3 and argv[1] == "lddebug":
        cmd_lddebug(argv[2])
    elif len(argv) == 3 and argv[1] == "trim":
        cmd_trim(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
