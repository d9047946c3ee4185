#!/usr/bin/env bash
# Where the resident memory of the agent is (not a test): starts `gpukb agent` (the
# daemon, which holds what `--once` holds) and, where a GPU answers, `nvidia-smi
# --query-gpu ... -lms` next to it, waits SECS seconds, and prints each process's RSS by
# mapping (file-backed text/data of each binary and library, anonymous memory, the heap)
# from /proc/PID/smaps, largest first.
# usage: tests/bench/rss-breakdown.sh [path/to/gpukb] [SECS]
set -u
G=${1:-target/release/gpukb}
SECS=${2:-4}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
by_mapping() { # PID LABEL
  echo "== $2 (pid $1): $(grep -E '^VmRSS|^VmHWM' /proc/$1/status | tr -s ' \t' ' ' | tr '\n' ' ')"
  awk '/^[0-9a-f]+-[0-9a-f]+ /{name=($6==""?"[anonymous]":$6); perm=$2}
       /^Rss:/{rss[name" "perm]+=$2}
       END{for(k in rss) if(rss[k]>=64) printf "%8.1f MB  %s\n", rss[k]/1000, k}' "/proc/$1/smaps" | sort -rn | head -25
}
"$G" agent --db "$T/a.db" --textfile "$T/a.prom" --interval 1s --kernel-log off >/dev/null 2>&1 &
A=$!
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm,clocks.mem,utilization.gpu,memory.used --format=csv -lms 500 >/dev/null 2>&1 &
  N=$!
fi
sleep "$SECS"
by_mapping "$A" "gpukb agent"
[ -n "${N:-}" ] && by_mapping "$N" "nvidia-smi --query-gpu -lms 500"
exit 0
