#!/usr/bin/env bash
# Footprint of `gpukb agent`, next to what a user would otherwise run, in the
# same run: wall time, CPU (user+sys) and peak RSS of `gpukb agent --once`
# (repeated, median reported) next to `python3 -c pass`, and where an NVIDIA
# driver is present next to `nvidia-smi -q` and `nvidia-smi --query-gpu=...
# --format=csv`. With DAEMON_SECS=N it also runs the daemon at a 10 s
# --interval for N seconds and reports its CPU % of one core and RSS.
# usage: tests/bench/agent-footprint.sh [path/to/gpukb]   (RUNS=7 DAEMON_SECS=300)
set -u
G=${1:-target/release/gpukb}
RUNS=${RUNS:-7}
DAEMON_SECS=${DAEMON_SECS:-0}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (GNU time)"; exit 2; }

# median of RUNS runs: "wall_s cpu_s maxrss_kb"
measure() {
  local label=$1; shift
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %U %S %M" -o "$T/t" "$@" >/dev/null 2>&1
    tail -n 1 "$T/t" | awk '{printf "%.4f %.4f %d\n", $1, $2+$3, $4}'
  done | sort -k2 -n | awk -v n="$RUNS" -v l="$label" '
    {w[NR]=$1; c[NR]=$2; r[NR]=$3}
    END {m=int((n+1)/2); printf "%-44s wall %6.3f s  cpu %6.3f s  peak RSS %6.1f MB\n", l, w[m], c[m], r[m]/1024}'
}

echo "== $($G --version); $(uname -m); $(nproc) CPUs; runs=$RUNS (median)"
$G agent --once --db "$T/warm.db" --textfile "$T/warm.prom" >/dev/null 2>&1  # creates the history
measure "gpukb agent --once (history + textfile)" $G agent --once --db "$T/warm.db" --textfile "$T/g.prom"
measure "python3 -c pass" python3 -c pass
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  measure "nvidia-smi -q" nvidia-smi -q
  measure "nvidia-smi --query-gpu=... --format=csv" nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm,utilization.gpu,memory.used --format=csv
fi
echo "== what --once exported"
grep -c '^gpukb_' "$T/g.prom" | sed 's/^/samples: /'
grep -E '^gpukb_(health|gpu_temp|power_usage|metric_supported)' "$T/g.prom" | head -8

if [ "$DAEMON_SECS" -gt 0 ]; then
  echo "== daemon: --interval 10s for ${DAEMON_SECS} s"
  $G agent --db "$T/d.db" --interval 10s --listen 127.0.0.1:0 2>"$T/d.log" &
  pid=$!
  sleep 15   # the first stack snapshot and sample
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  sleep "$DAEMON_SECS"
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  hz=$(getconf CLK_TCK)
  kill -TERM $pid; wait $pid; echo "daemon exit: $?"
  awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$DAEMON_SECS" -v r="$rss" \
    'BEGIN {printf "daemon: %.3f%% of one core over %d s (%.2f s CPU), peak RSS %.1f MB\n", 100*(b-a)/hz/s, s, (b-a)/hz, r/1024}'
  tail -3 "$T/d.log"
fi
