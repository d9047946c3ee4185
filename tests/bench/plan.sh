#!/usr/bin/env bash
# Benchmark (not a test): cold-process median wall time of `gpukb plan --json`
# next to `python3 -c pass`, measured in the same run, on the recorded H200
# capture, a described machine and the Jetson root. No GPU needed.
# Usage: tests/bench/plan.sh [N] [path/to/gpukb]   (default N=30, target/release/gpukb)
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-30}"
BIN="${2:-${CARGO_TARGET_DIR:-target}/release/gpukb}"
if [ ! -x "$BIN" ]; then
  echo "build first: cargo build --release -p gpukb  (or pass the binary path)" >&2
  exit 2
fi
H200=tests/fixtures/healthy/h200-live-2026-12-01
JETSON=tests/fixtures/healthy/jetson-orin-nx-jp62

median_ms() { # runs "$@" N times, prints the median wall time in ms
  local times=() t0 t1
  for _ in $(seq 1 3); do "$@" >/dev/null 2>&1 || true; done
  for _ in $(seq 1 "$N"); do
    t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}'
}
echo "cold-process median wall time over $N runs ($(nproc) cores, $(uname -m))"
PY=$(median_ms python3 -c pass)
row() { # name, then the command
  local name="$1"; shift
  local ms; ms=$(median_ms "$@")
  printf '%-44s %8s ms  %5s x python3 -c pass\n' "$name" "$ms" "$(awk -v a="$ms" -v b="$PY" 'BEGIN{printf "%.2f", a/b}')"
}
row "gpukb plan --json --replay H200 capture" "$BIN" plan --json --replay "$H200"
row "gpukb plan --json --gpu 'RTX 4060 Ti' --driver 535" "$BIN" plan --json --gpu "RTX 4060 Ti" --driver 535
row "gpukb plan --json --root Jetson Orin NX" "$BIN" plan --json --root "$JETSON"
row "gpukb plan --torch 2.5.1+cu124 --support-table" "$BIN" plan --json --torch 2.5.1+cu124 --support-table
printf '%-44s %8s ms  (%s)\n' "python3 -c pass" "$PY" "$(command -v python3)"
REAL=$(python3 -c 'import sys; print(sys.executable)')
if [ "$REAL" != "$(command -v python3)" ]; then # e.g. a pyenv shim: also the interpreter itself
  printf '%-44s %8s ms\n' "$REAL -c pass" "$(median_ms "$REAL" -c pass)"
fi
printf '%-44s %8s ms\n' "sh -c true (fork+exec floor)" "$(median_ms sh -c true)"
