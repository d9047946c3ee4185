#!/usr/bin/env bash
# Benchmark (not a test): how long a KB author waits for lint feedback on an edited entry.
# `gpukb kb lint kb` (the working tree's KB compiled in memory by gpukb-kb-compile, then
# every lint check, search of each example included) next to what they would otherwise do
# in the same run: touch the entry, `cargo build -p gpukb` (the build script recompiles the
# KB; the crates that embed it rebuild and relink), then lint the embedded copy.
# Usage: tests/bench/kb-lint.sh [N] [path/to/gpukb]   (default N=3, target/release/gpukb)
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
BIN="${2:-$TARGET/release/gpukb}"
if [ ! -x "$BIN" ]; then
  echo "build first: cargo build --release -p gpukb  (or pass the binary path)" >&2
  exit 2
fi
ENTRY=$(ls kb/entries/*.toml | head -n 1)

TIMES=$(mktemp)
trap 'rm -f "$TIMES"' EXIT
# Seconds (wall, user) of one run of "$@", output discarded (lint exits 1 on problems).
timed() {
  /usr/bin/time -o "$TIMES" -f '%e %U' "$@" >/dev/null 2>&1 || true
  tail -n 1 "$TIMES"
}
# The median wall and its user time of N runs.
median() {
  local runs=()
  for _ in $(seq 1 "$N"); do runs+=("$(timed "$@")"); done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(( (N + 1) / 2 ))p"
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
read -r lw lu < <(median "$BIN" kb lint kb)
printf '%-52s %7.2f s wall %7.2f s user  (median of %s)\n' "gpukb kb lint kb (no rebuild)" "$lw" "$lu" "$N"
read -r ew eu < <(median "$BIN" kb lint)
printf '%-52s %7.2f s wall %7.2f s user  (median of %s)\n' "gpukb kb lint (embedded KB)" "$ew" "$eu" "$N"

touch "$ENTRY"
read -r bw bu < <(timed cargo build -q -p gpukb)
printf '%-52s %7.2f s wall %7.2f s user\n' "touch $(basename "$ENTRY"); cargo build -p gpukb (dev)" "$bw" "$bu"
read -r dw du < <(timed "$TARGET/debug/gpukb" kb lint)
printf '%-52s %7.2f s wall %7.2f s user\n' "then target/debug/gpukb kb lint" "$dw" "$du"
awk -v a="$lw" -v b="$bw" -v d="$dw" 'BEGIN { printf "kb lint DIR: %.2f s; rebuild and lint: %.2f s (%.1fx)\n", a, b + d, (b + d) / a }'
