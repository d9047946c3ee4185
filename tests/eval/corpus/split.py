#!/usr/bin/env python3
"""Counts and splits gpukb's own eval corpus (tests/eval/corpus/*.jsonl).

The held-out part is fixed by the thread, not by the case: a case is held out
iff the first byte of sha256("gpukb-corpus-v1:" + source URL) is below 77
(77/256, about 30 %). Adding cases never moves an existing one.

    split.py a.jsonl b.jsonl                 counts per part and per category
    split.py a.jsonl b.jsonl --out DIR       also writes DIR/tune.jsonl, DIR/heldout.jsonl
    split.py a.jsonl --check                 validates every line (exit 1 on a problem)
    split.py a.jsonl --check --exclude /work/shared/eval/dev.jsonl ...
                                             also rejects sources found in those files

--check: each line is a JSON object with exactly the corpus fields, a non-empty
error, a root_cause from kb/categories.tsv column 1, confidence high/medium/low,
no source repeated more than twice, no id repeated.
"""

import argparse
import collections
import hashlib
import json
import os
import sys

SALT = "gpukb-corpus-v1:"
THRESHOLD = 77
FIELDS = ["id", "source", "error", "context", "root_cause", "diagnosis", "fix",
          "confidence", "confirmed_by", "found"]
CATEGORIES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "..", "kb", "categories.tsv")


def held_out(source):
    """True when the thread at `source` belongs to the held-out part."""
    return hashlib.sha256((SALT + source).encode("utf-8")).digest()[0] < THRESHOLD


def read_cases(paths):
    """(path, line number, parsed object or None, raw line) for every non-empty line."""
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        yield path, n, json.loads(line), line
                    except json.JSONDecodeError as e:
                        yield path, n, None, f"not JSON: {e}"


def known_categories(path):
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    return {r[0] for r in rows[1:] if r and r[0]}


def excluded_sources(paths):
    out = set()
    for path in paths:
        for _, _, obj, _ in read_cases([path]):
            if isinstance(obj, dict) and "source" in obj:
                out.add(obj["source"])
    return out


def check(paths, categories, excluded):
    """List of problems, one line each."""
    problems = []
    per_source = collections.Counter()
    ids = collections.Counter()
    for path, n, obj, raw in read_cases(paths):
        where = f"{path}:{n}"
        if obj is None:
            problems.append(f"{where}: {raw}")
            continue
        if not isinstance(obj, dict) or sorted(obj) != sorted(FIELDS):
            problems.append(f"{where}: fields differ from {FIELDS}")
            continue
        if not all(isinstance(obj[k], str) and obj[k].strip() for k in FIELDS):
            problems.append(f"{where}: empty or non-string field")
        if obj["root_cause"] not in categories:
            problems.append(f"{where}: root_cause {obj['root_cause']!r} not in categories.tsv")
        if obj["confidence"] not in ("high", "medium", "low"):
            problems.append(f"{where}: confidence {obj['confidence']!r}")
        if obj["source"] in excluded:
            problems.append(f"{where}: source is in an excluded (shared dev) set")
        per_source[obj["source"]] += 1
        ids[obj["id"]] += 1
    problems += [f"source used {c} times (max 2): {s}" for s, c in per_source.items() if c > 2]
    problems += [f"id used {c} times: {i}" for i, c in ids.items() if c > 1]
    return problems


def report(cases):
    parts = {"tune": [], "heldout": []}
    for obj in cases:
        parts["heldout" if held_out(obj["source"]) else "tune"].append(obj)
    total = len(cases)
    threads = {p: len({c["source"] for c in v}) for p, v in parts.items()}
    print(f"cases {total}: tune {len(parts['tune'])} ({threads['tune']} threads), "
          f"heldout {len(parts['heldout'])} ({threads['heldout']} threads)")
    cats = sorted({c["root_cause"] for c in cases})
    width = max([len(c) for c in cats] + [8])
    print(f"{'category':<{width}}  tune  heldout")
    for cat in cats:
        t = sum(c["root_cause"] == cat for c in parts["tune"])
        h = sum(c["root_cause"] == cat for c in parts["heldout"])
        print(f"{cat:<{width}}  {t:>4}  {h:>7}")
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", help="directory to write tune.jsonl and heldout.jsonl to")
    ap.add_argument("--check", action="store_true", help="validate the files")
    ap.add_argument("--exclude", nargs="*", default=[],
                    help="jsonl files whose sources must not appear (with --check)")
    ap.add_argument("--categories", default=CATEGORIES)
    args = ap.parse_args()

    if args.check:
        problems = check(args.files, known_categories(args.categories),
                         excluded_sources(args.exclude))
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            sys.exit(1)
        print("check: ok")

    cases = [obj for _, _, obj, _ in read_cases(args.files) if isinstance(obj, dict)]
    parts = report(cases)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, rows in parts.items():
            with open(os.path.join(args.out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
                for obj in rows:
                    f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        print(f"wrote {args.out}/tune.jsonl, {args.out}/heldout.jsonl")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
    except OSError as e:
        print(f"split.py: {e}", file=sys.stderr)
        sys.exit(1)
