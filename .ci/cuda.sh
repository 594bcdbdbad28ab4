#!/usr/bin/env bash
# Compiles the server with candle's `cuda` backend (fine-tuning on a GPU) on a machine without a
# GPU: NVIDIA's CUDA 13.0 compiler from PyPI (the version of the GPU machines' drivers; a newer
# nvcc writes PTX those drivers refuse), candle's kernels for CUDA_COMPUTE_CAP (default 90: H100
# and H200). It compiles every crate and candle's kernels without linking: linking needs the
# driver's link stub (libcuda.so), which is not on PyPI (a CUDA toolkit's lib64/stubs has it).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
CUDA_VENV="$HOME/.cache/clues-lab/venv-cuda"
# nvcc, its front end (nvvm: pip would otherwise take the newest, whose PTX this ptxas refuses),
# the runtime's headers and libcudart, and the C++ headers the kernels include, all of 13.0.
WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88
  nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85)
log "CUDA 13.0 compiler from PyPI ($CUDA_VENV)"
[ -x "$CUDA_VENV/bin/python" ] || python3 -m venv "$CUDA_VENV"
if ! "$CUDA_VENV/bin/pip" freeze 2>/dev/null | grep -qx "nvidia-nvvm==13.0.88"; then
  "$CUDA_VENV/bin/pip" install -q "${WHEELS[@]}"
fi
CUDA_HOME="$("$CUDA_VENV/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13"))')"
export CUDA_HOME CUDA_PATH="$CUDA_HOME" PATH="$CUDA_HOME/bin:$PATH"
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
nvcc --version | tail -2
log "cargo check -p server --features cuda (sm_$CUDA_COMPUTE_CAP)"
cargo check -p server --features cuda --bins
