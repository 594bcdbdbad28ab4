#!/usr/bin/env bash
# Runs on a GPU machine, from the folder server/bench/gpu-pack.sh packs (it is carried inside):
# needs the machine's Python with PyTorch and transformers, the NVIDIA driver, and nothing from a
# registry. For each task (SQuAD v2 and ReCoRD):
#   1. fine-tunes a BERT-base-shaped checkpoint (random weights written by the machine's own
#      transformers) on one shot group with candle, on each device in turn, timed; the model
#      tuned on the first device is exported to ONNX;
#   2. evaluates that model with ONNX Runtime on each device, and compares the answers with
#      the fine-tuning job's own evaluation (on the CPU both must agree exactly);
#   3. `bench` on each device: clues-lab's ONNX Runtime against Python's onnxruntime and against
#      transformers on PyTorch, on the same device, with the answers compared;
# then `bench --train` on each device: candle's fine-tuning update against PyTorch's.
# Everything printed is also written to OUT/run.log. Usage: bash gpu-run.sh [OUT]
# Environment: DEVICES (default "cuda cpu"; the first is where the compared model is tuned),
#   TASKS ("SQuAD-v2 ReCoRD"), K and SPLIT (10, 1), PYTHON (python3: with torch and
#   transformers), WEIGHTS (a checkpoint folder to fine-tune instead of a new BERT-base one,
#   or "tiny": a 2-layer BERT that numpy writes, for the CPU half in CI), CLUES_VENV (a Python
#   environment with onnxruntime to use as it is, instead of one made here from the packed
#   wheel).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$(mkdir -p "${1:-$HERE/results}" && cd "${1:-$HERE/results}" && pwd)"
DEVICES="${DEVICES:-cuda cpu}"
TASKS="${TASKS:-SQuAD-v2 ReCoRD}"
K="${K:-10}"
SPLIT="${SPLIT:-1}"
PY="${PYTHON:-python3}"
BIN="$HERE/bin/clues-lab"
exec > >(tee -a "$OUT/run.log") 2>&1
say() { printf '\n== %s\n' "$*"; }

say "the machine ($(date -u +%FT%TZ))"
uname -srm
echo "$(nproc) CPUs"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
  echo "no nvidia-smi: no NVIDIA driver here"
fi
(cd "$HERE" && sha256sum --quiet -c SHA256SUMS) && echo "the packed files are intact"

say "Python environment"
if [ -n "${CLUES_VENV:-}" ]; then
  echo "CLUES_VENV=$CLUES_VENV, used as it is"
else
  # The machine's Python (torch, transformers, tokenizers, numpy and the NVIDIA libraries
  # PyTorch brings) with the packed onnxruntime-gpu unzipped into a folder of its own, laid out
  # as a Python environment is (lib/pythonX.Y/site-packages, bin/python): no venv module and
  # no pip needed.
  TAG="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
  export CLUES_VENV="$OUT/env"
  SITE="$CLUES_VENV/lib/python$TAG/site-packages"
  mkdir -p "$SITE" "$CLUES_VENV/bin"
  printf '#!/bin/sh\nPYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec "%s" "$@"\n' "$SITE" "$(command -v "$PY")" >"$CLUES_VENV/bin/python"
  chmod +x "$CLUES_VENV/bin/python"
  WHEEL="$(ls "$HERE"/wheels/onnxruntime_gpu-*-cp"${TAG/./}"-*.whl 2>/dev/null | head -1 || true)"
  ANY="$(ls "$HERE"/wheels/onnxruntime_gpu-*.whl 2>/dev/null | head -1 || true)"
  [ -n "$ANY" ] || { echo "no onnxruntime-gpu wheel was packed" >&2; exit 1; }
  if [ -z "$WHEEL" ]; then
    echo "no onnxruntime-gpu wheel for Python $TAG was packed (pack with GPU_PYTHON=$TAG): clues-lab"
    echo "takes ONNX Runtime's libraries from $(basename "$ANY"); bench's Python onnxruntime side will not run"
  fi
  # The whole wheel where it matches this Python; else ONNX Runtime's libraries alone.
  "$PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if sys.argv[3] == "all" or n.startswith("onnxruntime/capi/lib")])' \
    "${WHEEL:-$ANY}" "$SITE" "$([ -n "$WHEEL" ] && echo all || echo libraries)"
  # clues-lab looks for the CUDA and cuDNN libraries in nvidia/*/lib beside onnxruntime.
  "$PY" - "$SITE" <<'EOF'
import os, sys
site = sys.argv[1]
try:
    import nvidia
except ImportError:
    print("no NVIDIA libraries in this Python (PyTorch's CUDA build brings them): CUDA will not load")
    sys.exit(0)
os.makedirs(os.path.join(site, "nvidia"), exist_ok=True)
for root in nvidia.__path__:
    for name in sorted(os.listdir(root)):
        src, dst = os.path.join(root, name), os.path.join(site, "nvidia", name)
        if os.path.isdir(os.path.join(src, "lib")) and not os.path.exists(dst):
            os.symlink(src, dst)
EOF
fi
HF_ARGS=()
if "$CLUES_VENV/bin/python" -c 'import torch, transformers; print("torch", torch.__version__, "CUDA", torch.version.cuda, "GPU", torch.cuda.is_available() and torch.cuda.get_device_name(0)); print("transformers", transformers.__version__)'; then
  HF_ARGS=(--hf-python "$CLUES_VENV/bin/python")
else
  echo "no torch and transformers in $CLUES_VENV: the checkpoint must be given (WEIGHTS) and bench's transformers side will not run"
fi
"$CLUES_VENV/bin/python" -c 'import onnxruntime as o; print("onnxruntime", o.__version__, o.get_available_providers())' \
  || echo "Python's onnxruntime does not load: bench's onnxruntime side will not run"
# The libraries the cuda build links (cuBLAS, cuRAND, the CUDA runtime) by soname: from the
# same place, else the packed runtime; the driver's libcuda.so.1 from the system.
LIBS="$(find -L "$CLUES_VENV"/lib/python*/site-packages/nvidia -maxdepth 2 -name lib -type d 2>/dev/null | paste -sd: || true)"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${LIBS:+$LIBS:}$HERE/lib"
"$BIN" --version || {
  echo "clues-lab does not start here; the libraries it lacks:" >&2
  ldd "$BIN" | grep "not found" >&2
  exit 1
}

DB="$OUT/gpu.sqlite"
rm -f "$DB"*
RUN=("$BIN" --database "sqlite:$DB")
say "the CLUES tasks"
"${RUN[@]}" import clues "$HERE/data" | tail -3

say "the checkpoint"
case "${WEIGHTS:-}" in
  "")
    CKPT="$OUT/bert-base-random"
    rm -rf "$CKPT"
    "$CLUES_VENV/bin/python" "$HERE/train_peer.py" make "$CKPT"
    cp "$HERE/tokenizer.json" "$CKPT/"
    WEIGHT_ARGS=(--weights "$CKPT")
    echo "BERT-base-shaped BertForQuestionAnswering, random weights (seed 0): $CKPT" ;;
  tiny)
    CKPT="$OUT/bert-tiny-random"
    rm -rf "$CKPT"
    "$CLUES_VENV/bin/python" "$HERE/tiny_checkpoint.py" "$CKPT"
    cp "$HERE/tokenizer.json" "$CKPT/"
    WEIGHT_ARGS=(--weights "$CKPT") ;;
  *) WEIGHT_ARGS=(--weights "$WEIGHTS"); echo "$WEIGHTS" ;;
esac

FIRST="${DEVICES%% *}"
for task in $TASKS; do
  for dev in $DEVICES; do
    say "$task: fine-tuning k=$K split=$SPLIT on $dev"
    rm -rf "$OUT/tuned-$dev"
    "${RUN[@]}" baseline --finetune "${WEIGHT_ARGS[@]}" --task "$task" --k "$K" --split "$SPLIT" \
      --device "$dev" --system "fine-tuned on $dev" --export "$OUT/tuned-$dev"
  done
  MODEL="$OUT/tuned-$FIRST/$task-finetuned-k$K-s$SPLIT"
  for dev in $DEVICES; do
    say "$task: the model tuned on $FIRST, evaluated by ONNX Runtime on $dev"
    "${RUN[@]}" eval --model "$MODEL" --task "$task" --k "$K" --split "$SPLIT" --device "$dev" \
      --system "tuned on $FIRST, run on $dev"
    # Against the fine-tuning job's own evaluation (on $FIRST): on the CPU both must agree.
    STRICT=()
    [ "$dev" != cpu ] || [ "$FIRST" != cpu ] || STRICT=(--strict)
    "$CLUES_VENV/bin/python" "$HERE/gpu_compare.py" "${STRICT[@]}" "$DB" "$task" \
      "fine-tuned on $FIRST" "tuned on $FIRST, run on $dev"
  done
  for dev in $DEVICES; do
    say "$task: bench on $dev"
    "${RUN[@]}" bench --model "$MODEL" --task "$task" --device "$dev" \
      --python "$CLUES_VENV/bin/python" "${HF_ARGS[@]}"
  done
done
# Fine-tuning speed: candle's loop against the same loop in PyTorch, per update, on each device
# (on a GPU also at a batch that fills it more).
if [ ${#HF_ARGS[@]} -gt 0 ]; then
  for dev in $DEVICES; do
    say "fine-tuning speed on $dev: candle against PyTorch (bench --train)"
    "${RUN[@]}" bench --train --device "$dev" "${HF_ARGS[@]}"
    if [ "$dev" = cuda ]; then
      "${RUN[@]}" bench --train --device cuda --batch 16 --length 256 --updates 10 "${HF_ARGS[@]}"
    fi
  done
else
  say "fine-tuning speed (bench --train): not run, no PyTorch"
fi
say "done: $OUT/run.log"
