#!/usr/bin/env bash
# `gpukb report` against the tool a maintainer asks for today, in the same
# run on the same machine: `python -m torch.utils.collect_env` when torch is
# importable, else `python3 -c pass` (the floor any Python tool pays).
# Prints wall time and peak RSS of each, five runs, and the ratio of medians.
#
# Usage: bash tests/bench/report.sh [path/to/gpukb]   (default target/release/gpukb)
# Env:   PY  the Python to time (default: /opt/torch/.venv/bin/python, else python3)
set -euo pipefail
G=${1:-target/release/gpukb}
PY=${PY:-$(ls /opt/torch/.venv/bin/python 2>/dev/null || command -v python3)}
runs=5
if "$PY" -c "import torch" >/dev/null 2>&1; then
  other=("$PY" -m torch.utils.collect_env); label="python -m torch.utils.collect_env"
else
  other=("$PY" -c pass); label="python3 -c pass (torch not importable)"
fi
# Times one command: prints "seconds KB" per run on stdout.
measure() {
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" "$@" >/dev/null 2>/tmp/gpukb-bench-time.$$ || true
    tail -n 1 /tmp/gpukb-bench-time.$$
  done
  rm -f /tmp/gpukb-bench-time.$$
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
"$G" --version
ours=$(measure "$G" report)
theirs=$(measure "${other[@]}")
echo "gpukb report                         runs (s KB): $(echo "$ours" | tr '\n' ' ')"
echo "$label  runs (s KB): $(echo "$theirs" | tr '\n' ' ')"
a=$(echo "$ours" | awk '{print $1}' | median)
b=$(echo "$theirs" | awk '{print $1}' | median)
ra=$(echo "$ours" | awk '{print $2}' | median)
rb=$(echo "$theirs" | awk '{print $2}' | median)
echo "median: gpukb report ${a} s ${ra} KB; ${label} ${b} s ${rb} KB"
awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "gpukb report takes %.1f %% of the time\n", 100 * a / b }'
