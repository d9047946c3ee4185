#!/usr/bin/env bash
# The H200 lab (tests/live/README.md): breaks the environment of a real GPU host in real ways
# (never a GPU setting), runs a real PyTorch program in each broken environment, keeps its real
# error text and what the process really loaded, and next to it what `gpukb fingerprint`, `doctor`
# and `search` predict and say in the same environment. Writes $OUT/<case>/ and $OUT/table.md
# (tests/live/compare.py); exits non-zero when any comparison fails.
#
#   OUT=/tmp/out tests/live/lab.sh [CASE...]      (all cases when none is named)
# Env: GPUKB (default target/release/gpukb), PY (default the venv's python that has torch),
#      LAB_BUDGET_S (default 420: cases not started by then are recorded as skipped).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:?set OUT to an output directory}
mkdir -p "$OUT"; : > "$OUT/cases.txt"
G=${GPUKB:-$ROOT/target/release/gpukb}
BUDGET=${LAB_BUDGET_S:-420}
START=$(date +%s)
LAB=/tmp/lab-live
mkdir -p "$LAB"
BASE_LLP=${LD_LIBRARY_PATH:-}

find_py() {
    for p in "${PY:-}" /opt/torch/.venv/bin/python3 "$(command -v python3)"; do
        [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import torch' 2>/dev/null && { echo "$p"; return; }
    done
    command -v python3
}
PY=$(find_py)
# helpers (json, realpath) run outside the broken environment
helper() { env -u LD_PRELOAD LD_LIBRARY_PATH="$BASE_LLP" "$PY" "$HERE/lab.py" "$@"; }

# ------------------------------------------------------------------ what this machine has
{
    echo "date: $(date -u +%FT%TZ)"; echo "python: $PY"; echo "gpukb: $G"
    "$G" --version 2>&1
    nvidia-smi -L 2>&1; nvidia-smi --query-gpu=driver_version,mig.mode.current --format=csv 2>&1
    env | grep -E '^(LD_LIBRARY_PATH|LD_PRELOAD|CUDA_|NCCL_|TORCH_|PATH)=' | sort
    echo "--- copies of the libraries on this machine"
    timeout 10 find / -xdev \( -path /proc -o -path /sys \) -prune -o \
        \( -name 'libcudnn.so.9*' -o -name 'libnccl.so.2*' -o -name 'libcublas.so.1*' \
           -o -name 'libcublasLt.so.1*' -o -name 'libcuda.so*' -o -name nvcc -o -name 'version.json' -path '*cuda*' \) \
        -print 2>/dev/null | sort | head -80
    echo "--- ldconfig -p (cuda libs)"
    ldconfig -p | grep -E 'libcudnn.so.9|libnccl.so.2|libcublas|libcuda.so' | head -20
    echo "--- toolkits"; ls -la /usr/local | grep -i cuda; ls -la /etc/alternatives 2>/dev/null | grep -i cuda
} > "$OUT/machine.txt" 2>&1
"$G" --help > "$OUT/gpukb-help.txt" 2>&1
for c in fingerprint doctor search; do "$G" "$c" --help > "$OUT/gpukb-$c-help.txt" 2>&1; done

# ------------------------------------------------------------------ the breakages' ingredients
SYS=/lib/x86_64-linux-gnu
TK=$(readlink -f /usr/local/cuda)
# a shadow directory with only the system NCCL (apt's libnccl2) in it
mkdir -p "$LAB/shadow-nccl" "$LAB/stub"
NCCL_OTHER=$(ls $SYS/libnccl.so.2 2>/dev/null || timeout 20 find / -xdev -name libnccl.so.2 -not -path '*/site-packages/*' 2>/dev/null | head -1)
ln -sfn "$NCCL_OTHER" "$LAB/shadow-nccl/libnccl.so.2"
CUDNN_OTHER=$(ls $SYS/libcudnn.so.9 2>/dev/null || timeout 20 find / -xdev -name libcudnn.so.9 -not -path '*/site-packages/*' 2>/dev/null | head -1)
# the toolkit's stub libcuda, as the soname the loader looks for
STUB=$(ls "$TK"/lib64/stubs/libcuda.so "$TK"/targets/*/lib/stubs/libcuda.so 2>/dev/null | head -1)
ln -sfn "$STUB" "$LAB/stub/libcuda.so.1"
# an nvcc-built binary for another architecture (sm_80 SASS only, no PTX; CUDA 13 nvcc refuses -arch=sm_80 -code=sm_80)
cat > "$LAB/k.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)e, \
          cudaGetErrorName(e), #call, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }
int main() {
  float* d; CHECK(cudaMalloc(&d, 32 * sizeof(float)));
  add_one<<<1, 32>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  printf("kernel ran\n"); return 0;
}
EOF
timeout 120 "$TK/bin/nvcc" -gencode arch=compute_80,code=sm_80 -o "$LAB/k_sm80" "$LAB/k.cu" > "$OUT/nvcc-build.txt" 2>&1
echo "rc=$?" >> "$OUT/nvcc-build.txt"
# another CUDA toolkit for CUDA_HOME: a real one of another version when the machine has it,
# else a stand-in at /usr/local/cuda-12.4 (version.json + an nvcc that answers --version as 12.4's),
# made only for the CUDA_HOME cases and removed after them, so the other cases see the machine as is
OTHER_TK=""
for d in /usr/local/cuda-* /opt/cuda* /opt/conda/pkgs/cuda-nvcc*; do
    [ -x "$d/bin/nvcc" ] || continue
    [ "$(readlink -f "$d")" = "$TK" ] && continue
    OTHER_TK=$d; break
done
STAND_IN=""
if [ -z "$OTHER_TK" ]; then
    OTHER_TK=/usr/local/cuda-12.4
    [ -e "$OTHER_TK" ] || [ -w /usr/local ] || OTHER_TK=$LAB/cuda-12.4
    STAND_IN=$OTHER_TK
fi
make_stand_in() {
    [ -n "$STAND_IN" ] || return 0
    mkdir -p "$STAND_IN/bin" "$STAND_IN/lib64"
    cat > "$STAND_IN/version.json" <<'EOF'
{
   "cuda" : { "name" : "CUDA SDK", "version" : "12.4.1" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.4.127" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "12.4.131" }
}
EOF
    cat > "$STAND_IN/bin/nvcc" <<'EOF'
#!/bin/sh
case "$*" in *-V*|*--version*)
printf '%s\n' "nvcc: NVIDIA (R) Cuda compiler driver" "Copyright (c) 2005-2024 NVIDIA Corporation" \
  "Built on Thu_Mar_28_02:18:24_PDT_2024" "Cuda compilation tools, release 12.4, V12.4.131" \
  "Build cuda_12.4.r12.4/compiler.34097967_0"; exit 0;; esac
echo "nvcc fatal   : this is the lab's stand-in CUDA 12.4 toolkit" >&2; exit 1
EOF
    chmod +x "$STAND_IN/bin/nvcc"
    echo "stand-in made by tests/live/lab.sh" > "$STAND_IN/LAB_STAND_IN"
}
remove_stand_in() {
    [ -n "$STAND_IN" ] && [ -e "$STAND_IN/LAB_STAND_IN" ] && rm -rf "$STAND_IN"
    return 0
}
trap remove_stand_in EXIT
# the same toolkit reached through an update-alternatives style chain
mkdir -p "$LAB/alternatives"
ln -sfn "$OTHER_TK" "$LAB/alternatives/cuda"
ln -sfn "$LAB/alternatives/cuda" "$LAB/cuda"
{
    echo "system cuDNN: $CUDNN_OTHER -> $(readlink -f "$CUDNN_OTHER")"
    echo "other NCCL: $NCCL_OTHER -> $(readlink -f "$NCCL_OTHER")"
    echo "toolkit: $TK; stub: $STUB"
    echo "other toolkit for CUDA_HOME: $OTHER_TK ${STAND_IN:+(a stand-in: no other toolkit on this machine)}"
} > "$OUT/ingredients.txt"

# ------------------------------------------------------------------ one case
# run_case NAME MODE "how it was broken" "expected checks (globs, ',')" "expected KB ids (',')" \
#          doctor-expect [VAR=VALUE...]
# doctor-expect: cause (the first root cause is an expected check / names an expected KB entry),
# healthy (the machine is fine, the program is at fault: no failure finding), process (whichever
# of the two the real process's outcome calls for: a shadowing the loader's order defeats is no
# fault)
run_case() {
    local name=$1 mode=$2 how=$3 checks=$4 kb=$5 dexp=$6; shift 6
    local d="$OUT/$name"; mkdir -p "$d"; echo "$name" >> "$OUT/cases.txt"
    if [ $(( $(date +%s) - START )) -gt "$BUDGET" ]; then
        echo "skipped: the lab's time budget ($BUDGET s) was spent" > "$d/skipped"; return
    fi
    NAME="$name" MODE="$mode" HOW="$how" CHECKS="$checks" KB="$kb" DEXP="$dexp" \
        "$PY" -c 'import json,os,sys; print(json.dumps({"case":os.environ["NAME"],"mode":os.environ["MODE"],"how":os.environ["HOW"],
          "expect_checks":[c for c in os.environ["CHECKS"].split(",") if c],"expect_kb":[k for k in os.environ["KB"].split(",") if k],
          "doctor_expect":os.environ["DEXP"],"env":sys.argv[1:]}, indent=1))' "$@" > "$d/case.json"
    local t0=$(date +%s.%N)
    if [ "$mode" = bin ]; then
        env "$@" timeout -k 5 60 "$LAB/k_sm80" > "$d/program.out" 2>&1; echo $? > "$d/program.rc"
    else
        env "$@" LD_DEBUG=libs LD_DEBUG_OUTPUT="$d/lddebug.raw" timeout -k 5 60 "$PY" "$HERE/lab.py" run --mode "$mode" \
            > "$d/program.out" 2>&1; echo $? > "$d/program.rc"
        helper lddebug "$d"
    fi
    echo "$(date +%s.%N) $t0" | awk '{printf "%.2f\n", $1-$2}' > "$d/program.seconds"
    env "$@" timeout -k 5 20 "$G" fingerprint --json > "$d/fingerprint.json" 2> "$d/fingerprint.err"; echo $? > "$d/fingerprint.rc"
    env "$@" timeout -k 5 20 "$G" doctor --color never > "$d/doctor.txt" 2>&1; echo $? > "$d/doctor.rc"
    env "$@" timeout -k 5 20 "$G" doctor --json > "$d/doctor.json" 2> "$d/doctor.err"
    local torch_file
    torch_file=$("$PY" - "$d/program.out" <<'EOF'
import json,sys
for l in open(sys.argv[1], errors="replace"):
    if l.startswith("LAB_RESULT "):
        print((json.loads(l[11:]).get("torch") or {}).get("file") or ""); break
EOF
)
    helper predicted "$d/fingerprint.json" "${torch_file:-}" > "$d/predicted.json" 2> "$d/predicted.err"
    helper search-text "$d" > "$d/error.txt"
    if [ -s "$d/error.txt" ]; then
        env "$@" timeout -k 5 20 "$G" search --color never -- "$(cat "$d/error.txt")" > "$d/search.txt" 2>&1
        env "$@" timeout -k 5 20 "$G" search --json -- "$(cat "$d/error.txt")" > "$d/search.json" 2> "$d/search.err"
        env "$@" timeout -k 5 20 "$G" search --no-detect --json -- "$(cat "$d/error.txt")" > "$d/search-text-only.json" 2>&1
    fi
    helper trim "$d"
}

# ------------------------------------------------------------------ the cases
ALL_CASES="healthy cudnn_system_llp stub_libcuda_llp cvd_bogus_uuid nccl_shadow_llp cublas_toolkit_llp preload_nccl preload_cudnn cvd_empty cvd_out_of_range nvcc_sm80_binary oom device_assert cuda_home_other_toolkit cuda_home_alternatives_chain"
CASES=${*:-$ALL_CASES}
SHADOW="library_shadowed_by_ld_library_path,*shadow*,*preload*"
CVD="cuda_visible_devices_hides_gpus"
for c in $CASES; do
  case $c in
  healthy) run_case healthy torch "nothing changed" "" "" healthy ;;
  cudnn_system_llp) run_case $c torch "LD_LIBRARY_PATH=$SYS (the system cuDNN's directory, replacing the default value)" \
      "$SHADOW" cudnn-version-incompatibility-ld-library-path,cov-cudnn9-sublibrary-version-mismatch cause "LD_LIBRARY_PATH=$SYS" ;;
  nccl_shadow_llp) run_case $c torch "LD_LIBRARY_PATH=$LAB/shadow-nccl first: one symlink libnccl.so.2 -> $NCCL_OTHER (apt's libnccl2)" \
      "$SHADOW" nccl-library-version-mismatch process "LD_LIBRARY_PATH=$LAB/shadow-nccl${BASE_LLP:+:$BASE_LLP}" ;;
  cublas_toolkit_llp) run_case $c torch "LD_LIBRARY_PATH=$TK/lib64 first (the toolkit's cuBLAS/cudart/cuFFT/... ahead of the wheels')" \
      "$SHADOW" cublaslt-symbol-version-conflict,cuda-library-versioned-symbol-missing process "LD_LIBRARY_PATH=$TK/lib64${BASE_LLP:+:$BASE_LLP}" ;;
  stub_libcuda_llp) run_case $c torch "LD_LIBRARY_PATH=$LAB/stub first: libcuda.so.1 -> $STUB" \
      "*stub*" cuda-stub-library-loaded cause "LD_LIBRARY_PATH=$LAB/stub${BASE_LLP:+:$BASE_LLP}" ;;
  preload_nccl) run_case $c torch "LD_PRELOAD=$NCCL_OTHER" \
      "$SHADOW" nccl-library-version-mismatch process "LD_PRELOAD=$NCCL_OTHER" ;;
  preload_cudnn) run_case $c torch "LD_PRELOAD=$CUDNN_OTHER" \
      "$SHADOW" cudnn-version-incompatibility-ld-library-path,cov-cudnn9-sublibrary-version-mismatch cause "LD_PRELOAD=$CUDNN_OTHER" ;;
  cvd_empty) run_case $c torch 'CUDA_VISIBLE_DEVICES="" (empty)' \
      "$CVD" cuda-visible-devices-hides-gpus cause "CUDA_VISIBLE_DEVICES=" ;;
  cvd_out_of_range) run_case $c torch 'CUDA_VISIBLE_DEVICES=7 (this host has one GPU)' \
      "$CVD" cuda-visible-devices-hides-gpus cause "CUDA_VISIBLE_DEVICES=7" ;;
  cvd_bogus_uuid) run_case $c torch 'CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000 (no such GPU)' \
      "$CVD" cuda-visible-devices-hides-gpus cause "CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000" ;;
  cuda_home_other_toolkit) make_stand_in; run_case $c ext "CUDA_HOME=$OTHER_TK, then a CUDAExtension setup.py build_ext" \
      "cuda_home_older_than_torch,*cuda_home*" detected-cuda-version-mismatches-torch cause "CUDA_HOME=$OTHER_TK"; remove_stand_in ;;
  cuda_home_alternatives_chain) make_stand_in; run_case $c ext "CUDA_HOME=$LAB/cuda -> $LAB/alternatives/cuda -> $OTHER_TK, then a CUDAExtension setup.py build_ext" \
      "cuda_home_older_than_torch,*cuda_home*" detected-cuda-version-mismatches-torch cause "CUDA_HOME=$LAB/cuda"; remove_stand_in ;;
  nvcc_sm80_binary) run_case $c bin "runs a binary nvcc built with -gencode arch=compute_80,code=sm_80 (SASS for sm_80 only, no PTX) on the sm_90 H200" \
      "" selfbuilt-cuda-code-missing-gencode healthy ;;
  oom) run_case $c oom "allocates 1.5x the GPU's memory in one tensor" "" cuda-out-of-memory-model-too-large healthy ;;
  device_assert) run_case $c assert "indexes a 10-element CUDA tensor at 100 (device-side assert)" "" device-side-assert-index-out-of-bounds healthy ;;
  *) echo "unknown case $c" >&2 ;;
  esac
done

# ------------------------------------------------------------------ doctor's time next to nvidia-smi -q's
{
    for i in 1 2 3; do
        s=$(date +%s.%N); timeout -k 5 20 "$G" doctor > /dev/null 2>&1; e=$(date +%s.%N)
        echo "doctor $(echo "$e $s" | awk '{printf "%.3f", $1-$2}')"
    done
    for i in 1 2 3; do
        s=$(date +%s.%N); timeout -k 5 60 nvidia-smi -q > /dev/null 2>&1; e=$(date +%s.%N)
        echo "nvidia-smi-q $(echo "$e $s" | awk '{printf "%.3f", $1-$2}')"
    done
} > "$OUT/timings.txt"

echo "lab: $(( $(date +%s) - START )) s" >> "$OUT/timings.txt"
"$PY" "$HERE/compare.py" "$OUT" > "$OUT/table.md"
rc=$?
cat "$OUT/table.md"
exit $rc
