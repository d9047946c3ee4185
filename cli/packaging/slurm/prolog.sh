#!/bin/sh
# Slurm prolog: drain the node when gpukb finds a failure (the doctor's on the
# stack, or a fail-class Xid this boot by the Xid policy).
# Exit 1 only on a failure verdict (--fail-on failure); warnings and
# "unknown" (no GPU visible) pass. gpukb's own trouble (exit 2) passes too,
# so a broken history never drains a healthy node.
out=$(gpukb agent --once --fail-on failure --db /var/lib/gpukb/agent.db \
  --textfile /var/lib/node_exporter/textfile_collector/gpukb.prom 2>&1)
if [ $? -eq 1 ]; then
  # A hardware failure (a fail-class Xid this boot) names the Xid; else the
  # doctor's summary from the first line.
  hw=$(printf '%s\n' "$out" | sed -n 's/^  hardware: failure this boot (\(.*\)); the node.*/\1/p' | head -n 1 | cut -c1-200)
  if [ -n "$hw" ]; then
    reason="hw: $hw"
  else
    reason="stack:$(printf '%s\n' "$out" | head -n 1 | cut -d: -f4- | cut -c1-200)"
  fi
  scontrol update NodeName="$(hostname -s)" State=DRAIN Reason="gpukb:${reason}"
  exit 1
fi
exit 0
