#!/usr/bin/env bash
# Benchmark (not a test): cold-process median wall time of `gpukb search` with its default
# detection (cheap facts of this machine: no cuInit; ELF summaries cached after the first
# run) and with --no-detect, next to `python3 -c pass` and `grep -ri` over kb/entries,
# measured in the same run.
# Usage: tests/bench/search.sh [N] [path/to/gpukb]   (default N=50, target/release/gpukb)
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-50}"
BIN="${2:-${CARGO_TARGET_DIR:-target}/release/gpukb}"
if [ ! -x "$BIN" ]; then
  echo "build first: cargo build --release -p gpukb  (or pass the binary path)" >&2
  exit 2
fi
QUERY="RuntimeError: CUDA error: no kernel image is available for execution on the device"
BIG=$(mktemp)
trap 'rm -f "$BIG"' EXIT
# a 300-line traceback-like paste ending in the real error
for i in $(seq 1 300); do echo "  File \"/home/user/proj/train.py\", line $i, in forward"; done >"$BIG"
echo "$QUERY" >>"$BIG"

if command -v hyperfine >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
  JSON=$(mktemp)
  trap 'rm -f "$BIG" "$JSON"' EXIT
  hyperfine -N --style basic --warmup 3 --runs "$N" --export-json "$JSON" \
    -n "gpukb search (default: detects)" "$BIN search '$QUERY'" \
    -n "gpukb search (one line)" "$BIN search --no-detect '$QUERY'" \
    -n "gpukb search (300-line stdin)" "sh -c '$BIN search --no-detect <$BIG'" \
    -n "gpukb explain 209" "$BIN explain 209" \
    -n "python3 -c pass" "python3 -c pass" \
    -n "grep -ri over kb/entries" "grep -ri 'no kernel image' kb/entries" \
    -n "sh -c true (fork+exec floor)" "sh -c true" >/dev/null 2>&1 || true
  echo "cold-process median wall time over $N runs (hyperfine; $(nproc) cores, $(uname -m))"
  python3 - "$JSON" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f'{r["command"]:<34} {r["median"]*1000:8.2f} ms')
PY
  exit 0
fi

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
printf '%-34s %8s ms\n' "gpukb search (default: detects)" "$(median_ms "$BIN" search "$QUERY")"
printf '%-34s %8s ms\n' "gpukb search (one line)" "$(median_ms "$BIN" search --no-detect "$QUERY")"
printf '%-34s %8s ms\n' "gpukb search (300-line stdin)" "$(median_ms sh -c "$BIN search --no-detect <$BIG")"
printf '%-34s %8s ms\n' "gpukb explain 209" "$(median_ms "$BIN" explain 209)"
printf '%-34s %8s ms\n' "python3 -c pass" "$(median_ms python3 -c pass)"
printf '%-34s %8s ms\n' "grep -ri over kb/entries" "$(median_ms grep -ri 'no kernel image' kb/entries)"
printf '%-34s %8s ms\n' "sh -c true (fork+exec floor)" "$(median_ms sh -c true)"
