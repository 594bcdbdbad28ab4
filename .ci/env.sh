# Shared settings for the .ci scripts (sourced, not run).
# Build outputs live outside the clone by default so CI and fresh clones reuse them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/clues-lab/target}"
# The browser bundle's name; set for every build so the leptos crate is never rebuilt over it.
export LEPTOS_OUTPUT_NAME=clues-lab
export PATH="$HOME/.cargo/bin:$PATH"
# One site folder per profile, so the tests' debug build never replaces the release site.
site_dir() { printf '%s/site-%s' "$CARGO_TARGET_DIR" "$1"; }
# The model track's Python environment (ONNX Runtime, the MiniLM encoder; made by .ci/setup).
# The binary finds libonnxruntime.so and the encoder there unless ORT_DYLIB_PATH /
# CLUES_ENCODER_ONNX / CLUES_ENCODER_TOKENIZER say otherwise.
export CLUES_VENV="${CLUES_VENV:-$HOME/.cache/clues-lab/venv}"
log() { printf '\n== %s [%s]\n' "$*" "$(date +%H:%M:%S)"; }
