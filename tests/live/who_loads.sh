#!/usr/bin/env bash
# Research aid for the loader model (tests/live/README.md): which object asked for each CUDA
# library a real torch process maps, and how (NEEDED or dlopen), from glibc's own LD_DEBUG=files
# trace, for `import torch` and then one conv, one matmul and a 1-rank NCCL all-reduce.
#   OUT=/tmp/out tests/live/who_loads.sh
set -u
OUT=${OUT:?}
PY=${PY:-/opt/torch/.venv/bin/python3}
prog='
import os, torch
import torch.distributed as dist
x = torch.randn(8, 3, 32, 32, device="cuda")
torch.nn.Conv2d(3, 8, 3).cuda()(x)
a = torch.randn(64, 64, device="cuda"); a @ a
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(4, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
dist.destroy_process_group()
'
for stage in import run; do
    if [ $stage = import ]; then code='import torch'; else code=$prog; fi
    LD_DEBUG=files LD_DEBUG_OUTPUT=$OUT/ld-$stage timeout 120 "$PY" -c "$code" > $OUT/$stage.out 2>&1
    cat $OUT/ld-$stage.* | grep -E 'file=lib(cu|nv|torch|c10)' | grep -E 'needed by|dynamically loaded by' \
        | sed -E 's/^ *[0-9]+: *//' | sort -u > $OUT/who-$stage.txt
    rm -f $OUT/ld-$stage.*
done
SITE=$("$PY" -c 'import torch,os;print(os.path.dirname(os.path.dirname(torch.__file__)))')
"$PY" - > $OUT/global_deps.py.txt <<PY
import inspect, torch
src = open(torch.__file__).read()
i = src.find("def _load_global_deps"); j = src.find("\ndef ", i + 10)
print(torch.__version__); print(src[i:j])
i = src.find("def _preload_cuda"); print(src[i:i+3000] if i >= 0 else "no _preload_cuda")
PY
for f in torch/lib/libtorch_global_deps.so torch/lib/libtorch_cuda.so torch/lib/libtorch_nvshmem.so torch/lib/libc10_cuda.so torch/lib/libtorch_cpu.so; do
    echo "== $f"; readelf -d "$SITE/$f" | grep -E 'NEEDED|RPATH|RUNPATH'
done > $OUT/needed.txt 2>&1
ls "$SITE"/torch/lib > $OUT/torch-lib.txt
echo done
