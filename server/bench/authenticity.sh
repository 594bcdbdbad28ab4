#!/usr/bin/env bash
# Authenticity benchmark: a server on a fresh database with a 40-item SST-2-shaped task of
# 40-word reviews, then `clues-lab load authenticity`: 500 honest and 500 assisted sessions over
# the API, each answer with the page's signals as `domain::authenticity::simulate` draws them;
# prints the share of each the report flags. Usage: bash server/bench/authenticity.sh [honest]
# [assisted]; PROFILE=debug uses the debug build (the rates do not depend on it).
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
HONEST="${1:-500}"; ASSISTED="${2:-500}"; PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then cargo build --release -p server --bin clues-lab >&2; else cargo build -p server --bin clues-lab >&2; fi
BIN="$CARGO_TARGET_DIR/$PROFILE/clues-lab"
WORK="$(mktemp -d)"; trap 'kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
DB="sqlite://$WORK/authenticity.db"
mkdir -p "$WORK/data/SST-2"
python3 - "$WORK/data/SST-2" <<'PY'
import json, sys
words = "the film takes its time with a story that some will find moving and others slow".split()
def w(name, ids):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for i in ids:
            label = "positive" if i % 2 == 0 else "negative"
            text = f"review {i}: " + " ".join(words[(i + j) % len(words)] for j in range(40))
            f.write(json.dumps({"answer": [label], "question": "positive or negative?", "id": i, "context": text}) + "\n")
w("sst_test.jsonl", range(1000, 1040))
w("sst_train_10_1.jsonl", range(10))
PY
"$BIN" --database "$DB" import clues "$WORK/data" >/dev/null
CLUES_PASSWORD=bench-password "$BIN" --database "$DB" user add bench --role researcher
"$BIN" --database "$DB" study create --task SST-2 --name sessions --scenarios 0 --annotators 100000 --open >/dev/null
"$BIN" --database "$DB" serve --addr 127.0.0.1:0 --no-demo --new-workers-per-address 1000000 \
  --site-root "$(site_dir "$PROFILE")" > "$WORK/serve.out" 2>"$WORK/serve.err" &
PID=$!
until grep -q "listening on" "$WORK/serve.out" 2>/dev/null; do sleep 0.2; done
URL="$(sed -n 's/^listening on //p' "$WORK/serve.out")"
echo "== $HONEST honest and $ASSISTED assisted sessions of 40 items"
CLUES_PASSWORD=bench-password "$BIN" load authenticity --url "$URL" --study 1 --workers 8 \
  --honest "$HONEST" --assisted "$ASSISTED" --user bench
