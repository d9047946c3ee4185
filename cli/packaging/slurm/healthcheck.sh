#!/bin/sh
# Slurm HealthCheckProgram: drain this node while gpukb finds a failure, in
# the hardware (a fail-class Xid this boot) or in the software stack, and
# resume it once both are ok again -- but only if gpukb drained it (its
# reason starts with "gpukb:"); a reason someone else set is left alone.
#
# slurm.conf:  HealthCheckProgram=/etc/slurm/gpukb-healthcheck.sh
#              HealthCheckInterval=300
# slurm.conf(5), HealthCheckProgram: Slurm kills it if it does not finish
# within 60 s, does not act on its exit status while slurmd runs, and at
# slurmd's start runs it until it exits 0 (blocking registration). So it
# calls scontrol itself, bounds each gpukb run with timeout(1), and always
# exits 0. gpukb runs as `agent --once --npd RULE`: one line, exit 0 ok or
# warning, 1 problem, 2 unknown; it writes no history (an `agent --ack` does
# not clear a hardware drain here: a reboot does). Unknown or a timeout
# changes nothing.
GPUKB=${GPUKB:-gpukb}
LIMIT=${GPUKB_TIMEOUT:-20}   # seconds per rule; two rules stay well inside 60 s
node=$(hostname -s)

run_rule() {
  timeout -k 2 "$LIMIT" "$GPUKB" agent --once --npd "$1" 2>/dev/null
}

hw_line=$(run_rule hardware); hw=$?
stack_line=$(run_rule stack); stack=$?
hw_line=$(printf '%s\n' "$hw_line" | head -n 1 | tr -d '"')
stack_line=$(printf '%s\n' "$stack_line" | head -n 1 | tr -d '"')

# The node's current reason, without the " [user@time]" scontrol appends.
current=$(scontrol show node "$node" 2>/dev/null | sed -n 's/^ *Reason=//p' | sed 's/ \[[^]]*\]$//' | head -n 1)

reason=
if [ "$hw" -eq 1 ]; then
  reason="gpukb:hw: $hw_line"
elif [ "$stack" -eq 1 ]; then
  reason="gpukb:stack: $stack_line"
fi

if [ -n "$reason" ]; then
  if [ "$current" != "$reason" ]; then
    scontrol update nodename="$node" state=drain reason="$reason"
  fi
elif [ "$hw" -eq 0 ] && [ "$stack" -eq 0 ]; then
  case "$current" in
    gpukb:*) scontrol update nodename="$node" state=resume ;;
  esac
fi
exit 0
