#!/usr/bin/env python3
"""Compares what the real process did with what gpukb predicted and said, for each case of the
H200 lab (tests/live/lab.sh), and prints a markdown report on stdout.

  python3 tests/live/compare.py OUT_DIR [--summary FILE]

Per case: the real error (one line); the libraries the real process mapped (/proc/self/maps,
DT_SONAME of each file) against gpukb's predicted torch.loads[] and libcuda, per soname by
realpath; whether doctor's first root cause is the expected one (or, where the machine is
healthy and the program is at fault, that doctor blames nothing); whether search's top answer on
the real error text is an expected KB entry, and whether search ruled an expected entry out.
Exit status 1 when any comparison fails, 0 when all pass. Reads the small files only
(*.min.json, predicted.json, program.out), so it runs on a copied results directory too.
"""
import fnmatch
import json
import os
import re
import statistics
import sys

MARK = "LAB_RESULT "
# the NVIDIA libraries whose loading the model has to predict (driver internals excluded)
TRACKED = re.compile(
    r"^lib(cuda|cudart|cudnn(_[a-z_]+)?|nccl|cublas(Lt)?|cufft|curand|cusparse(Lt)?|cusolver|"
    r"nvJitLink|nvrtc|nvidia-ml|cupti|nvshmem_host|cufile)\.so(\.\d+)*$")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def program_record(d):
    rec = None
    for line in read_text(os.path.join(d, "program.out")).splitlines():
        if line.startswith(MARK):
            try:
                rec = json.loads(line[len(MARK):])
            except ValueError:
                pass
    return rec


# ---------------------------------------------------------------- judging (pure)

def real_libs(rec):
    """soname -> [realpath] of what the process mapped."""
    out = {}
    for m in (rec or {}).get("maps") or []:
        so = m.get("soname") or os.path.basename(m.get("path", ""))
        out.setdefault(so, [])
        if m.get("realpath") not in out[so]:
            out[so].append(m.get("realpath"))
    return out


def same_copy(predicted, mapped):
    """agree: the process mapped exactly the predicted file; else why not."""
    if mapped == [predicted]:
        return "agree"
    if predicted in mapped:
        return f"DISAGREE ({len(mapped)} copies mapped)"
    return "DISAGREE"


def compare_loads(rec, pred):
    """Rows (soname, status, gpukb, real) and whether they all pass."""
    if rec is None:
        return [], None
    real = real_libs(rec)
    rows, ok = [], True
    predicted = set()
    # One soname may be mapped from several files (LD_PRELOAD of one copy, then torch
    # opening its wheel's copy by path): compare the set of copies per soname.
    by_so = {}
    for ld in (pred or {}).get("loads") or []:
        by_so.setdefault(ld.get("soname") or "", []).append(ld)
    for so, lds in by_so.items():
        predicted.add(so)
        g = "; ".join(f"{ld.get('path')} -> {ld.get('realpath')} ({ld.get('rule') or ld.get('via') or '?'})"
                      for ld in lds)
        if so not in real:
            rows.append((so, "predicted, not loaded", g, "-"))
            continue
        copies = sorted({ld.get("realpath") for ld in lds})
        if copies == sorted(set(real[so])):
            status = "agree" if len(copies) == 1 else f"agree ({len(copies)} copies)"
        else:
            status = same_copy(copies[0], real[so]) if len(copies) == 1 else "DISAGREE"
        ok &= status.startswith("agree")
        rows.append((so, status, g, ", ".join(real[so])))
    lc = (pred or {}).get("libcuda")
    if "libcuda.so.1" in real and "libcuda.so.1" not in predicted:
        predicted.add("libcuda.so.1")
        if lc:
            status = same_copy(lc.get("realpath"), real["libcuda.so.1"])
            ok &= status == "agree"
            g = f"{lc.get('path')} -> {lc.get('realpath')} ({lc.get('from')})"
            rows.append(("libcuda.so.1", status, g, ", ".join(real["libcuda.so.1"])))
    site = ((pred or {}).get("site_packages") or "/nonexistent").rstrip("/") + "/"
    for so in sorted(real):
        if so not in predicted and TRACKED.match(so):
            ok = False
            outside = any(not (p or "").startswith(site) for p in real[so])
            rows.append((so, "NOT PREDICTED" + (" (outside site-packages)" if outside else ""),
                         "-", ", ".join(real[so])))
    return rows, ok


def matches(finding, case):
    if any(fnmatch.fnmatch(finding.get("check") or "", p) for p in case["expect_checks"]):
        return True
    return bool(set(finding.get("kb_entries") or []) & set(case["expect_kb"]))


def judge_doctor(doc, case, process_failed):
    """(right, cell text). `process` expectations follow the real process: a cause when it
    failed, none when it ran."""
    if not doc or "findings" not in doc:
        return False, "no doctor output"
    findings = doc.get("findings") or []
    roots = [f for f in findings if f.get("root_cause") and f.get("severity") in ("failure", "warning")]
    verdict = doc.get("verdict")
    expect = case["doctor_expect"]
    if expect == "process":
        expect = "cause" if process_failed else "healthy"
    if expect == "healthy":
        bad = [f for f in findings if f.get("severity") == "failure"]
        if bad:
            return False, f"wrong: {verdict}, blames `{bad[0].get('check')}`"
        if verdict not in ("ok", "warning"):
            return False, f"wrong: {verdict}"
        warn = ", ".join(sorted({f.get('check') for f in roots}))
        return True, f"right: {verdict}" + (f" (warnings: {warn})" if warn else "")
    if roots and matches(roots[0], case):
        return True, f"right: `{roots[0].get('check')}`"
    named = [f.get("check") for f in findings if matches(f, case)]
    first = f"`{roots[0].get('check')}`" if roots else "no root cause"
    more = f"; named lower: `{named[0]}`" if named else ""
    return False, f"wrong: {verdict}, {first}{more}"


def ruled_out_ids(s):
    ids = [h.get("id") for h in s.get("ruled_out") or []]
    ids += [h.get("id") for h in s.get("results") or []
            if (h.get("machine") or {}).get("outcome") == "ruled_out"]
    return ids


def judge_search(s, case):
    """(right or None when not applicable, top-1 cell, ruled-out cell)."""
    if s is None:
        return None, "n/a (no error)", "-"
    if "results" not in s:
        return False, "no search output", "-"
    res = s.get("results") or []
    top = res[0] if res else None
    right = bool(top) and top.get("id") in case["expect_kb"]
    cell = (f"{'right' if right else 'wrong'}: `{top.get('id')}` ({top.get('confidence')})"
            if top else "wrong: no result")
    ruled = [i for i in ruled_out_ids(s) if i in case["expect_kb"]]
    return right, cell, (f"**yes**: `{ruled[0]}`" if ruled else "no")


def expected_check_outcomes(doc, case):
    """What doctor concluded for each expected check it ran: (name, outcome, because)."""
    out = []
    for name, o in sorted(((doc or {}).get("checks") or {}).items()):
        if any(fnmatch.fnmatch(name, p) for p in case["expect_checks"]) and isinstance(o, dict):
            out.append((name, o.get("outcome"), o.get("because")))
    return out


def ruled_out_why(s, case):
    """Why search ruled the expected entries out: (id, check, because)."""
    hits = (s or {}).get("ruled_out") or []
    hits += [h for h in (s or {}).get("results") or []
             if (h.get("machine") or {}).get("outcome") == "ruled_out"]
    return [(h.get("id"), (h.get("machine") or {}).get("check"), (h.get("machine") or {}).get("because"))
            for h in hits if h.get("id") in case["expect_kb"]]


def one_line(text, n=110):
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def median_times(text):
    runs = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                runs.setdefault(parts[0], []).append(float(parts[1]))
            except ValueError:
                pass
    return {k: (statistics.median(v), v) for k, v in runs.items()}


# ---------------------------------------------------------------- reading and rendering

def judge_case(out, name):
    d = os.path.join(out, name)
    case = load_json(os.path.join(d, "case.json")) or {
        "case": name, "how": "?", "expect_checks": [], "expect_kb": [], "doctor_expect": "?"}
    r = {"case": name, "how": case.get("how"), "case_def": case}
    if os.path.exists(os.path.join(d, "skipped")):
        r["skipped"] = read_text(os.path.join(d, "skipped")).strip()
        r["pass"] = False
        return r
    rec = program_record(d)
    err = read_text(os.path.join(d, "error.txt")).strip()
    r["error"] = err
    r["program_rc"] = read_text(os.path.join(d, "program.rc")).strip()
    if rec is not None:
        r["failed_step"] = (rec.get("error") or {}).get("step")
        r["steps_ok"] = list((rec.get("steps") or {}).keys())
    rows, loads_ok = compare_loads(rec, load_json(os.path.join(d, "predicted.json")))
    r["loads"], r["loads_ok"] = rows, loads_ok
    failed = rec is None or rec.get("error") is not None
    r["doctor_ok"], r["doctor"] = judge_doctor(load_json(os.path.join(d, "doctor.min.json")), case,
                                               failed)
    s = load_json(os.path.join(d, "search.min.json")) if err else None
    t = load_json(os.path.join(d, "search-text-only.min.json")) if err else None
    r["search_ok"], r["search"], r["ruled_out"] = judge_search(s, case)
    r["ruled_out_why"] = ruled_out_why(s, case)
    r["doctor_checks"] = expected_check_outcomes(
        load_json(os.path.join(d, "doctor.min.json")), case)
    _, r["search_text_only"], _ = judge_search(t, case)
    r["fails"] = [part for part, bad in (
        ("loads", loads_ok is False), ("doctor", not r["doctor_ok"]),
        ("search", r["search_ok"] is False), ("ruled out", r["ruled_out"] not in ("no", "-")))
        if bad]
    r["pass"] = not r["fails"]
    return r


def loads_cell(r):
    if r.get("loads_ok") is None:
        return "n/a (not torch)"
    rows = r["loads"]
    agree = sum(1 for x in rows if x[1].startswith("agree"))
    bad = [x[0] for x in rows if x[1].startswith("DISAGREE")]
    miss = [x for x in rows if x[1].startswith("NOT PREDICTED")]
    foreign = [x[0] for x in miss if "outside" in x[1]]
    cell = f"{agree} agree"
    if bad:
        cell += "; **disagree**: " + ", ".join(bad)
    if miss:
        cell += f"; {len(miss)} not predicted"
        if foreign:
            cell += f", of them from outside site-packages: {', '.join(foreign)}"
    return cell


def render(out, results):
    lines = []
    meta = read_text(os.path.join(out, "machine.txt")).splitlines()
    lines.append("# H200 lab: the real process next to gpukb\n")
    lines += [f"    {m}" for m in meta[:7]]
    lines.append("")
    lines.append("| case | broken by | real error (one line) | loads: real vs gpukb (per soname, realpath) "
                 "| doctor's root cause | search top-1 (machine view) | ruled out the right entry | "
                 "search top-1 (text only) | pass |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['case']} | {r['how']} | {r['skipped']} | | | | | | ✗ |")
            continue
        err = one_line(r["error"]) if r["error"] else "none (all steps ran)"
        lines.append("| " + " | ".join([
            r["case"], one_line(r["how"], 80), err.replace("|", "\\|"), loads_cell(r), r["doctor"],
            r["search"], r["ruled_out"], r["search_text_only"],
            "✓" if r["pass"] else "✗ " + ", ".join(r["fails"])]) + " |")
    times = median_times(read_text(os.path.join(out, "timings.txt")))
    lines.append("")
    if times:
        lines.append("Wall time, median of 3 in the same run: " + "; ".join(
            f"`{k}` {m:.3f} s ({', '.join(f'{x:.3f}' for x in v)})" for k, (m, v) in times.items()))
    lines.append("")
    lines.append("## Details\n")
    for r in results:
        lines.append(f"### {r['case']}\n")
        lines.append(f"Broken by: {r['how']}. Expected: checks {r['case_def'].get('expect_checks')}, "
                     f"KB {r['case_def'].get('expect_kb')}, doctor `{r['case_def'].get('doctor_expect')}`.\n")
        if "skipped" in r:
            continue
        lines.append(f"Program exit {r['program_rc']}; steps that ran: {r.get('steps_ok')}; "
                     f"failed at: {r.get('failed_step')}.\n")
        if r["error"]:
            lines.append("```\n" + r["error"][:1500] + "\n```\n")
        bad = [x for x in r["loads"] if not x[1].startswith("agree")]
        if bad:
            lines.append("| soname | status | gpukb predicts | real process mapped |\n|---|---|---|---|")
            lines += [f"| {a} | {b} | {c} | {e} |" for a, b, c, e in bad]
            lines.append("")
        lines.append(f"Doctor: {r['doctor']}. Search: {r['search']}; ruled out right: {r['ruled_out']}; "
                     f"text only: {r['search_text_only']}.\n")
        for name, outcome, because in r.get("doctor_checks") or []:
            lines.append(f"Doctor's check `{name}`: {outcome}: {because}.\n")
        for kb_id, check, because in r.get("ruled_out_why") or []:
            lines.append(f"Search ruled `{kb_id}` out by check `{check}`: {because}.\n")
    failed = [r["case"] for r in results if not r["pass"]]
    lines.append(f"**{len(results) - len(failed)}/{len(results)} cases pass.**"
                 + (f" Failing: {', '.join(failed)}." if failed else ""))
    return "\n".join(lines) + "\n", not failed


def main(argv):
    if len(argv) < 2 or not os.path.isdir(argv[1]):
        sys.stderr.write("usage: compare.py OUT_DIR [--summary FILE]\n")
        return 2
    out = argv[1]
    names = [n for n in read_text(os.path.join(out, "cases.txt")).split() if n]
    if not names:
        names = sorted(n for n in os.listdir(out) if os.path.exists(os.path.join(out, n, "case.json")))
    names = list(dict.fromkeys(names))
    results = [judge_case(out, n) for n in names]
    text, ok = render(out, results)
    sys.stdout.write(text)
    if "--summary" in argv:
        with open(argv[argv.index("--summary") + 1], "w") as f:
            json.dump(results, f, indent=1)
    return 0 if ok and results else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
