#!/usr/bin/env bash
# One batched GPU-host session for issues 9-13 (search, plan, agent, report): every
# figure next to the tool a user would otherwise run, in the same run. Writes to $OUT.
# usage: OUT=dir tests/bench/h200-search-plan-agent-report.sh path/to/gpukb
set -u
B=${1:-target/release/gpukb}
OUT=${OUT:-/tmp/gpukb-session}
mkdir -p "$OUT"
chmod +x "$B"
export XDG_CACHE_HOME=$OUT/cache
echo "== $($B --version)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
echo "== what search's default detection reads, and its cost (ELF cache cold, then warm)"
for i in 1 2; do $B fingerprint --cheap --timings --json 2>&1 >/dev/null | tr '\n' ' ' | sed 's/gpukb: //g'; echo; done
echo "== search: default detection vs --no-detect vs python3 -c pass"
bash tests/bench/search.sh 31 "$B" 2>&1 | tee "$OUT/search-bench.txt"
echo "== search --no-detect, step by step (3 runs)"
for i in 1 2 3; do $B search --no-detect --timings "RuntimeError: CUDA error: no kernel image is available for execution on the device" 2>&1 >/dev/null | tr '\n' ' ' | sed 's/gpukb: //g'; echo; done
echo "== search on this machine (JSON facts, first results)"
$B search --json "RuntimeError: CUDA error: no kernel image is available for execution on the device" > "$OUT/search.json"
python3 -c "
import json;v=json.load(open('$OUT/search.json'))
print('facts:',v['facts']['from'],v['facts']['applied'],'|',v['facts']['reason'])
for r in v['results'][:3]: print(' ',r['id'],r['confidence'],(r['machine'] or {}).get('outcome'))
for r in v['ruled_out']: print('  ruled out:',r['id'],'|',r['machine']['because'][:100])
print('undecided:',[u['check'] for u in v['undecided_checks']])"
$B search "Failed to initialize NVML: Driver/library version mismatch NVRM version 535.104.05 NVIDIA GeForce RTX 3060" | tail -3
echo "== doctor on this machine (frameworks layer included)"
$B doctor > "$OUT/doctor.txt"; echo "doctor exit $?"; head -45 "$OUT/doctor.txt"
echo "== plan on this machine"
$B plan | head -30
$B plan --json > "$OUT/plan.json"; echo "plan exit $?"
bash tests/bench/plan.sh 21 "$B" 2>&1 | tail -8
echo "== agent --once and the footprint bench"
$B agent --once --db "$OUT/agent.db" --textfile "$OUT/gpukb.prom"; echo "agent --once exit $?"
head -20 "$OUT/gpukb.prom"
RUNS=7 CANARY=1m bash tests/bench/agent-footprint.sh "$B" 2>&1 | tail -30
echo "== report vs collect_env"
bash tests/bench/report.sh "$B" 2>&1 | tail -6
$B report -o "$OUT/report.md" >/dev/null; wc -c "$OUT/report.md"
echo "== capture --redact round trip"
rm -rf /tmp/gpukb-red
$B capture --redact -o /tmp/gpukb-red 2>&1 | tail -2
$B doctor --replay /tmp/gpukb-red | tail -3
$B doctor | tail -3
H=$(hostname); grep -rl "$H" /tmp/gpukb-red | head -3; echo "files naming the hostname: $(grep -rl "$H" /tmp/gpukb-red | wc -l)"
