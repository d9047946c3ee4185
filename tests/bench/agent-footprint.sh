#!/usr/bin/env bash
# Footprint of `gpukb agent`, next to what a user would otherwise run, in the
# same run: wall time, CPU (user+sys) and peak RSS of `gpukb agent --once`
# (median of RUNS runs, ELF cache warm; the first, cold run is shown too) next
# to `python3 -c pass`, and where an NVIDIA GPU answers next to `nvidia-smi -q`
# and `nvidia-smi --query-gpu=... --format=csv` (without one those rows are
# skipped, with a note). With --daemon[=SECS] (or DAEMON_SECS=SECS) it also
# runs the daemon at a 10 s --interval for SECS seconds (default 300) and
# reports its CPU % of one core and its RSS, read from /proc/PID/stat and
# /proc/PID/status.
#
# usage: tests/bench/agent-footprint.sh [--daemon[=SECS]] [path/to/gpukb]
#        env: RUNS=7 DAEMON_SECS=0 CANARY=DUR (one --once run with --canary DUR, and its
#        output) DAEMON_CANARY=1 (the daemon with --canary DUR too; its children's CPU apart)
# Targets (issue 11): --once <= 20 MB RSS and <= 0.5x python3 CPU without a
# GPU; with one, RSS <= nvidia-smi --query-gpu's and CPU <= 1x of it; the
# daemon <= 0.1 % of one core.
set -u
G=target/release/gpukb
RUNS=${RUNS:-7}
DAEMON_SECS=${DAEMON_SECS:-0}
CANARY=${CANARY:-}
for a in "$@"; do
  case "$a" in
    --daemon) DAEMON_SECS=300 ;;
    --daemon=*) DAEMON_SECS=${a#--daemon=} ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) G=$a ;;
  esac
done
[ -x "$G" ] || { echo "no gpukb binary at $G (cargo build --release -p gpukb)"; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time, for peak RSS: apt-get install time)"; exit 2; }
T=$(mktemp -d)
DPID=
cleanup() { [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
# the agent's ELF cache ($T/elf-cache, next to the history) starts empty, then stays warm

ROWS="$T/rows"
: >"$ROWS"
# one run: "wall_s cpu_s maxrss_kb". CPU (user+sys, the command and what it waited for)
# from bash's `times` in a subshell, to the millisecond (GNU time prints hundredths,
# too coarse next to nvidia-smi's 20 ms); peak RSS from GNU time; wall from the clock.
now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "$EPOCHREALTIME"; else date +%s.%N; fi; }
once() {
  local t0 t1 cpu
  t0=$(now)
  cpu=$( ( /usr/bin/time -f "%M" -o "$T/t" "$@" >/dev/null 2>&1; times ) | tail -n 1)
  t1=$(now)
  echo "$cpu" | awk -v a="$t0" -v b="$t1" -v rss="$(tail -n 1 "$T/t")" '
    function secs(x,  m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return m*60 + x }
    {printf "%.4f %.4f %d\n", b-a, secs($1)+secs($2), rss}'
}
# median of RUNS runs (by CPU) -> a table row "label|wall|cpu|rss_kb"
measure() {
  local label=$1; shift
  for _ in $(seq "$RUNS"); do once "$@"; done | sort -k2 -n |
    awk -v n="$RUNS" -v l="$label" '{w[NR]=$1; c[NR]=$2; r[NR]=$3}
      END {m=int((n+1)/2); printf "%s|%.4f|%.4f|%d\n", l, w[m], c[m], r[m]}' >>"$ROWS"
}
row_of() { awk -F'|' -v l="$1" '$1==l' "$ROWS"; }

gpu=no
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"$T/L" 2>/dev/null && grep -q '^GPU' "$T/L"; then
  gpu=yes
fi
echo "== $($G --version 2>/dev/null | head -1); $(uname -m); $(nproc) CPUs; $(grep -c '^GPU' "$T/L" 2>/dev/null || echo 0) GPU(s); runs=$RUNS (median)"
[ "$gpu" = yes ] && echo "== $(head -1 "$T/L"); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"

A="$G agent --once --db $T/a.db --textfile $T/a.prom"
once $A | awk -v l="gpukb agent --once (first run, cold cache)" '{printf "%s|%.4f|%.4f|%d\n", l, $1, $2, $3}' >>"$ROWS"
measure "gpukb agent --once" $A
if [ -n "$CANARY" ]; then
  once $A --canary "$CANARY" | awk -v l="gpukb agent --once --canary (runs it once)" '{printf "%s|%.4f|%.4f|%d\n", l, $1, $2, $3}' >>"$ROWS"
fi
if command -v python3 >/dev/null 2>&1; then
  measure "python3 -c pass" python3 -c pass
fi
Q="--query-gpu=temperature.gpu,power.draw,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,memory.used,memory.free --format=csv"
if [ "$gpu" = yes ]; then
  measure "nvidia-smi -q" nvidia-smi -q
  measure "nvidia-smi --query-gpu=... --format=csv" nvidia-smi $Q
fi

echo
printf "%-44s %8s %8s %10s\n" "command" "wall s" "CPU s" "peak RSS"
awk -F'|' '{printf "%-44s %8.4f %8.4f %7.1f MB\n", $1, $2, $3, $4/1024}' "$ROWS"
[ "$gpu" = yes ] || echo "(no NVIDIA GPU answers nvidia-smi here: the nvidia-smi rows are skipped)"

echo
echo "== targets"
agent=$(row_of "gpukb agent --once")
check() { # label agent_value op reference_value
  awk -v l="$1" -v a="$2" -v r="$3" 'BEGIN {printf "%-52s %s\n", l, (a <= r ? "met" : "NOT met")}'
}
if [ "$gpu" = yes ]; then
  ref=$(row_of "nvidia-smi --query-gpu=... --format=csv")
  ar=$(echo "$agent" | cut -d'|' -f4); rr=$(echo "$ref" | cut -d'|' -f4)
  ac=$(echo "$agent" | cut -d'|' -f3); rc=$(echo "$ref" | cut -d'|' -f3)
  check "--once RSS <= nvidia-smi --query-gpu's ($((ar/1024)) vs $((rr/1024)) MB)" "$ar" "$rr"
  check "--once CPU <= 1x nvidia-smi --query-gpu's ($ac vs $rc s)" "$ac" "$rc"
else
  ar=$(echo "$agent" | cut -d'|' -f4); ac=$(echo "$agent" | cut -d'|' -f3)
  check "--once RSS <= 20 MB ($(awk -v r="$ar" 'BEGIN{printf "%.1f", r/1024}') MB)" "$ar" 20480
  py=$(row_of "python3 -c pass")
  if [ -n "$py" ]; then
    pc=$(echo "$py" | cut -d'|' -f3)
    check "--once CPU <= 0.5x python3 -c pass ($ac vs $pc s)" "$ac" "$(awk -v p="$pc" 'BEGIN{print p/2}')"
  fi
fi

echo
echo "== what --once exported ($(grep -c '^gpukb_' "$T/a.prom" 2>/dev/null || echo 0) samples)"
grep -E '^gpukb_(health|gpu_temp|power_usage|canary_ok)' "$T/a.prom" 2>/dev/null | head -6
$G agent --once --db "$T/a.db" ${CANARY:+--canary "$CANARY"} 2>/dev/null | grep -E 'cuInit|snapshot|canary' | head -12

if [ "$DAEMON_SECS" -gt 0 ]; then
  echo
  extra=()
  [ -n "$CANARY" ] && [ -n "${DAEMON_CANARY:-}" ] && extra=(--canary "$CANARY")
  echo "== daemon: --interval 10s${extra[*]:+ ${extra[*]}} for ${DAEMON_SECS} s"
  $G agent --db "$T/d.db" --interval 10s --listen 127.0.0.1:0 "${extra[@]}" 2>"$T/d.log" &
  DPID=$!
  sleep 15   # the first stack snapshot and sample
  if ! kill -0 "$DPID" 2>/dev/null; then echo "daemon exited early:"; cat "$T/d.log"; exit 1; fi
  hz=$(getconf CLK_TCK)
  t0=$(awk '{print $14+$15}' /proc/$DPID/stat)
  c0=$(awk '{print $16+$17}' /proc/$DPID/stat)
  sleep "$DAEMON_SECS"
  t1=$(awk '{print $14+$15}' /proc/$DPID/stat)
  c1=$(awk '{print $16+$17}' /proc/$DPID/stat)   # the canary's child processes
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$DPID/status)
  hwm=$(awk '/^VmHWM/ {print $2}' /proc/$DPID/status)
  thr=$(awk '/^Threads/ {print $2}' /proc/$DPID/status)
  kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
  awk -v a="$t0" -v b="$t1" -v ca="$c0" -v cb="$c1" -v hz="$hz" -v s="$DAEMON_SECS" -v r="$rss" -v h="$hwm" -v t="$thr" -v rc="$rc" 'BEGIN {
    pct = 100*(b-a)/hz/s
    printf "daemon: %.3f %% of one core over %d s (%.2f s CPU); RSS %.1f MB, peak %.1f MB; %d threads; exit %d\n", pct, s, (b-a)/hz, r/1024, h/1024, t, rc
    if (cb > ca) printf "canary child processes: %.2f s CPU over the same %d s (%.3f %% of one core)\n", (cb-ca)/hz, s, 100*(cb-ca)/hz/s
    printf "%-52s %s\n", "daemon <= 0.1 % of one core", (pct <= 0.1 ? "met" : "NOT met") }'
  grep -v '^$' "$T/d.log" | tail -4
fi
