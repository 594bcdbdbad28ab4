#!/usr/bin/env bash
# Compiles the server with candle's `cuda` backend (fine-tuning on a GPU) on a machine without a
# GPU: NVIDIA's CUDA 13.0 compiler from PyPI (the version of the GPU machines' drivers; a newer
# nvcc writes PTX those drivers refuse), candle's kernels for CUDA_COMPUTE_CAP (default 90: H100
# and H200). It compiles every crate and candle's kernels (`cargo check`).
# With --link it builds the release binary instead, in its own target directory
# (target-cuda/release/clues-lab): it links against stubs of the CUDA libraries that candle
# links (.ci/cuda_stubs.py; the driver's link stub is not on PyPI, and cuBLAS is 600 MB), and
# runs where the driver and CUDA 13's cuBLAS, cuRAND and runtime are (server/bench/gpu-run.sh).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
LINK=0
case "${1:-}" in
  "") ;;
  --link) LINK=1 ;;
  *) echo "usage: .ci/cuda.sh [--link]" >&2; exit 2 ;;
esac
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
if [ "$LINK" = 0 ]; then
  log "cargo check -p server --features cuda (sm_$CUDA_COMPUTE_CAP)"
  cargo check -p server --features cuda --bins
  exit 0
fi
CUDARC="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-"$(awk '/^name = "cudarc"$/ {getline; gsub(/[^0-9.]/, ""); print}' Cargo.lock)" | head -1)"
log "link stubs of the CUDA libraries (from $CUDARC)"
python3 .ci/cuda_stubs.py "$CUDARC/src" "$CUDA_HOME/lib/stubs"
# candle's kernels link the CUDA runtime too: the wheel's own library (it has no unversioned name).
ln -sf "$CUDA_HOME/lib/libcudart.so.13" "$CUDA_HOME/lib/stubs/libcudart.so"
export CARGO_TARGET_DIR="$HOME/.cache/clues-lab/target-cuda"
log "cargo build --release -p server --features cuda (sm_$CUDA_COMPUTE_CAP) into $CARGO_TARGET_DIR"
cargo build --release -p server --features cuda
readelf -d "$CARGO_TARGET_DIR/release/clues-lab" | grep NEEDED
