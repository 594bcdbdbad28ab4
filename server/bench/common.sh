# Shared by the benchmark scripts (sourced after .ci/env.sh): the clues-lab binary of $PROFILE
# and an SST-2-shaped task of generated reviews in the official CLUES layout.

# Builds clues-lab for $PROFILE (release unless set) and prints its path.
bench_binary() {
  if [ "${PROFILE:-release}" = release ]; then
    cargo build --release -p server --bin clues-lab >&2
  else
    cargo build -p server --bin clues-lab >&2
  fi
  echo "$CARGO_TARGET_DIR/${PROFILE:-release}/clues-lab"
}

# sst_task DIR WORDS FIRST END: DIR/SST-2/sst_test.jsonl with items FIRST..END-1 and
# sst_train_10_1.jsonl with items 0..9, each "review <i>: " and WORDS words of one sentence,
# labelled positive for an even id.
sst_task() {
  mkdir -p "$1/SST-2"
  python3 - "$1/SST-2" "$2" "$3" "$4" <<'PY'
import json, sys
out, n, first, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
words = "the film takes its time with a story that some will find moving and others slow".split()
def w(name, ids):
    with open(f"{out}/{name}", "w") as f:
        for i in ids:
            label = "positive" if i % 2 == 0 else "negative"
            text = f"review {i}: " + " ".join(words[(i + j) % len(words)] for j in range(n))
            f.write(json.dumps({"answer": [label], "question": "positive or negative?", "id": i, "context": text}) + "\n")
w("sst_test.jsonl", range(first, end))
w("sst_train_10_1.jsonl", range(10))
PY
}
