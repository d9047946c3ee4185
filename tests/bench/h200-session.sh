#!/usr/bin/env bash
# One batched session on a GPU host (the H200 used for issue 2's closing
# note): fingerprint, capture, replay round trip, the cuobjdump cross-check
# of torch's fatbin, and the fingerprint benchmark. Results go to $OUT.
# usage: OUT=dir tests/bench/h200-session.sh path/to/gpukb
set -u
B=${1:-target/release/gpukb}
OUT=${OUT:-/tmp/gpukb-session}
mkdir -p "$OUT"
chmod +x "$B"
echo "== gpukb $($B --version)"
echo "== fingerprint"
$B fingerprint | tee "$OUT/fingerprint.txt"
$B fingerprint --json > "$OUT/fingerprint.json"
echo "== capture and replay"
rm -rf /tmp/gpukb-capture
$B capture -o /tmp/gpukb-capture
du -sh /tmp/gpukb-capture
$B fingerprint --replay /tmp/gpukb-capture --json > /tmp/gpukb-replayed.json
cmp /tmp/gpukb-replayed.json /tmp/gpukb-capture/fingerprint.json && echo "ROUND TRIP: replayed fingerprint identical to the live one"
tar czf "$OUT/capture.tgz" -C /tmp gpukb-capture
echo "== cuobjdump cross-check"
TL=$(ls /opt/*/.venv/lib/python3*/site-packages/torch/lib/libtorch_cuda.so 2>/dev/null | head -1)
echo "libtorch_cuda.so: $TL"
if command -v cuobjdump >/dev/null || [ -x /usr/local/cuda/bin/cuobjdump ]; then
  CO=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  $CO --list-elf "$TL" | sed -E 's/.*\.(sm_[0-9a-z]+)\..*/\1/' | sort | uniq -c | tee "$OUT/cuobjdump-elf.txt"
  $CO --list-ptx "$TL" 2>&1 | sed -E 's/.*\.(sm_[0-9a-z]+)\..*/\1/' | sort | uniq -c | tee "$OUT/cuobjdump-ptx.txt"
fi
echo "== nvidia-smi's own answers"
nvidia-smi --query-gpu=name,driver_version,compute_cap,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv
nvidia-smi | sed -n 3p
echo "== search with this machine's facts"
$B search --limit 3 "CUDA error: no kernel image is available for execution on the device" | tee "$OUT/search.txt" | head -60
echo "== benchmark"
PY=$(ls /opt/*/.venv/bin/python 2>/dev/null | head -1)
TORCH_PYTHON=${PY:-python3} python3 tests/bench/fingerprint.py "$B" 10 | tee "$OUT/bench.txt"
