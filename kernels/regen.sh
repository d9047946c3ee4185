#!/usr/bin/env bash
# Regenerates kernels/artifacts/ (PTX + cubins for every arch, MANIFEST) with no GPU
# and no CUDA toolkit: NVRTC and ptxas come from NVIDIA's pinned PyPI wheels.
#   kernels/regen.sh            # creates a throwaway venv under ${TMPDIR:-/tmp}
#   GPUKB_CUDA_VENV=dir kernels/regen.sh   # reuse a venv that already has the wheels
# Then run `cargo test -p gpukb-kernels` and commit kernels/artifacts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${GPUKB_CUDA_VENV:-${TMPDIR:-/tmp}/gpukb-cuda-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-nvrtc-cu12==12.9.86
site="$("$venv/bin/python" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')"
ptxas="$site/nvidia/cuda_nvcc/bin/ptxas"
nvrtc="$site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
[ -x "$ptxas" ] || { echo "regen: no ptxas at $ptxas" >&2; exit 1; }
[ -f "$nvrtc" ] || { echo "regen: no NVRTC at $nvrtc" >&2; exit 1; }
rm -f "$here"/artifacts/*.ptx "$here"/artifacts/*.cubin "$here"/artifacts/MANIFEST
"$venv/bin/python" "$here/regen.py" "$nvrtc" "$ptxas"
echo "regen: wrote $(ls "$here/artifacts" | wc -l) files to $here/artifacts"
