#!/bin/sh
# Slurm prolog: drain the node when gpukb's doctor finds a failure.
# Exit 1 only on a failure verdict (--fail-on failure); warnings and
# "unknown" (no GPU visible) pass. gpukb's own trouble (exit 2) passes too,
# so a broken history never drains a healthy node.
out=$(gpukb agent --once --fail-on failure --db /var/lib/gpukb/agent.db \
  --textfile /var/lib/node_exporter/textfile_collector/gpukb.prom 2>&1)
if [ $? -eq 1 ]; then
  reason=$(printf '%s\n' "$out" | head -n 1 | cut -d: -f4- | cut -c1-200)
  scontrol update NodeName="$(hostname -s)" State=DRAIN Reason="gpukb:${reason}"
  exit 1
fi
exit 0
