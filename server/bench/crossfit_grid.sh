#!/usr/bin/env bash
# What CrossFit's direct fine-tuning costs here: a BART-Base-shaped model (random weights in the
# real file layout: 6 + 6 layers, d_model 768, 12 heads, FFN 3072, 50,265 words) written by the
# `.ci/setup --bench` Python, fine-tuned by `clues-lab crossfit learn` (release, CPU) on one seed
# of a 16-shot, two-class task (32 train, 32 dev, 100 test lines, written here). Prints seconds
# per update at each batch size, seconds per development decoding, and the cost of CrossFit's
# grid (3 learning rates x batch 2, 4, 8 x 1000 updates, 10 development decodings each) for one
# task and seed and for the 5 seeds. Usage: bash server/bench/crossfit_grid.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
cargo build --release -p server --bin clues-lab >&2
BIN="$CARGO_TARGET_DIR/release/clues-lab"
PY="${CLUES_HF_VENV:-$HOME/.cache/clues-lab/hf-venv}/bin/python"
[ -x "$PY" ] || { echo "no $PY: bash .ci/setup --bench makes it" >&2; exit 2; }
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
"$PY" - "$WORK" <<'PY'
import json, os, sys, torch
from transformers import BartConfig, BartForConditionalGeneration
work = sys.argv[1]
cfg = BartConfig(vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6,
                 encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
                 decoder_ffn_dim=3072, max_position_embeddings=1024)
torch.manual_seed(0)
BartForConditionalGeneration(cfg).save_pretrained(f"{work}/bart-base", safe_serialization=True)
special = ["<s>", "<pad>", "</s>", "<unk>"]
words = special + ["positive", "negative"] + [f"w{i}" for i in range(50265 - 6)]
tok = {"version": "1.0", "truncation": None, "padding": None,
       "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                         "normalized": False, "special": True} for i, t in enumerate(special)],
       "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
       "post_processor": {"type": "TemplateProcessing",
           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}],
           "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                              "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
       "decoder": None, "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)}, "unk_token": "<unk>"}}
json.dump(tok, open(f"{work}/bart-base/tokenizer.json", "w"))
os.makedirs(f"{work}/data")
def line(i):  # a 30-word input
    return " ".join(f"w{(i * 7 + j * 13) % 50000}" for j in range(30)) + "\t" + ("positive" if i % 2 else "negative")
for split, n in [("train", 32), ("dev", 32), ("test", 100)]:
    with open(f"{work}/data/bench_16_100_{split}.tsv", "w") as f:
        f.write("\n".join(line(i + {"train": 0, "dev": 1000, "test": 2000}[split]) for i in range(n)) + "\n")
PY
DB="sqlite://$WORK/bench.db"
"$BIN" --database "$DB" import crossfit "$WORK/data" >/dev/null
run() { # batch steps eval-every: seconds of one learn run under a fresh method name
  local start end
  start=$(date +%s.%N)
  "$BIN" --database "$DB" crossfit learn --model "$WORK/bart-base" --task bench --method "m$RANDOM$RANDOM" \
    --learning-rates 1e-5 --batch-sizes "$1" --steps "$2" --warmup 1 --eval-every "$3" --device cpu >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
declare -A PER
for b in 2 4 8; do
  short=$(run "$b" 2 2); long=$(run "$b" 6 6)
  PER[$b]=$(echo "($long - $short) / 4" | bc -l)
  printf 'batch %s: %.2f s per update\n' "$b" "${PER[$b]}"
done
# Two development decodings (after updates 1 and 2) against one (after update 2).
once=$(run 2 2 2); twice=$(run 2 2 1)
decode=$(echo "$twice - $once" | bc -l)
printf 'one development decoding (32 lines): %.1f s\n' "$decode"
grid=$(echo "3 * 1000 * (${PER[2]} + ${PER[4]} + ${PER[8]}) + 9 * 10 * $decode" | bc -l)
printf 'CrossFit grid, one task and seed: %.1f h; 5 seeds: %.1f h (CPU, %s cores)\n' \
  "$(echo "$grid / 3600" | bc -l)" "$(echo "5 * $grid / 3600" | bc -l)" "$(nproc)"
