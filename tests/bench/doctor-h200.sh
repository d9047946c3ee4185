#!/usr/bin/env bash
# The doctor issue on a real H200: healthy, CUDA_VISIBLE_DEVICES hiding the GPUs, a --quick fingerprint, a new capture, timings. Writes JSON under $OUT.
set -x
G=./target/release/gpukb
nvidia-smi -L; uname -r
$G --version
$G doctor; echo "rc=$?"
$G doctor --json > $OUT/doctor-live.json; echo "rc=$?"
CUDA_VISIBLE_DEVICES= $G doctor; echo "rc=$?"
CUDA_VISIBLE_DEVICES= $G doctor --json > $OUT/doctor-cvd-empty.json; echo "rc=$?"
CUDA_VISIBLE_DEVICES=7 $G doctor | tail -25; echo "rc=$?"
PY=$(ls /opt/torch/.venv/bin/python 2>/dev/null || which python3)
CUDA_VISIBLE_DEVICES= $PY -c "import torch; print('torch sees', torch.cuda.device_count(), 'devices')" 2>&1 | tail -2
$G fingerprint --quick --json > $OUT/quick.json; echo "rc=$?"
$G doctor --fingerprint $OUT/quick.json; echo "rc=$?"
$G search --fingerprint $OUT/quick.json --json "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu." > $OUT/search-quick.json; echo "rc=$?"
$G capture -o $OUT/capture; echo "rc=$?"
$G fingerprint --json > $OUT/capture/fingerprint.json
$G doctor --replay $OUT/capture | tail -5; echo "rc=$?"
for i in 1 2 3 4 5; do /usr/bin/time -f "doctor %e s %M KB" $G doctor >/dev/null; done 2>&1 | tail -5
for i in 1 2 3; do /usr/bin/time -f "doctor --quick-fingerprint %e s %M KB" $G doctor --fingerprint $OUT/quick.json >/dev/null; done 2>&1 | tail -3
for i in 1 2 3; do /usr/bin/time -f "nvidia-smi -q %e s %M KB" nvidia-smi -q >/dev/null; done 2>&1 | tail -3
ls /sys/bus/pci/devices | head; ls /lib/modules 2>&1 | head
# doctor --probe and capture --probe
/usr/bin/time -f "doctor --probe %e s %M KB" $G doctor --probe | tail -4; echo "rc=$?"
$G capture --probe -o /tmp/capp && ls /tmp/capp && $G doctor --replay /tmp/capp --json > $OUT/doctor-replay-probe.json; echo "rc=$?"
python3 -c "import json; d=json.load(open('$OUT/doctor-replay-probe.json')); print(d['verdict'], {k: v for k, v in d['checks'].items() if k.startswith('probe')})"
