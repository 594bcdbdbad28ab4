#!/usr/bin/env bash
# Load benchmark: a release server on a fresh database, then `clues-lab load` for crowd load,
# a login flood and an export soak over 300k annotation rows. Prints submits/s, p50/p99 and the
# server's resident memory. Usage: bash server/bench/load.sh [workers] [seconds] [soak seconds];
# CROWD_ONLY="8 32 128" runs crowd load alone at each number of workers instead;
# ARRIVALS="8 32" crowd load where each worker leaves after 5 answers and a new one joins
# (arrival latency: the join and the first item); CROWD_FIRST=1 the crowd alone, then beside
# every export at once (each format twice, predictions, two dashboards): slowest answer and p99
# of each with their ratio, each export's first byte, and the dashboard's time once built;
# OTHER_STUDY=1 the exports' study's pay sheet and dashboard every second, quiet and while the
# crowd answers its own study (a version per study: issue 76); WATCH_OWN=1 the same, with the
# crowd's study filled as the exports' is and watched itself (a live study). ON_POSTGRES=1 runs on a
# throwaway PostgreSQL cluster instead of SQLite; PROFILE=debug uses a debug build.
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
WORKERS="${1:-40}"; SECONDS_EACH="${2:-10}"; SOAK="${3:-60}"
# The study of exports: TEST_ITEMS items, filled with about FILL_ROWS synthetic rows (FILL_ROWS /
# TEST_ITEMS finished workers; TEST_ITEMS=210 FILL_ROWS=42000 is a study of 200 x 210).
TEST_ITEMS="${TEST_ITEMS:-300}"; FILL_ROWS="${FILL_ROWS:-300000}"
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then cargo build --release -p server --bin clues-lab >&2; else cargo build -p server --bin clues-lab >&2; fi
BIN="$CARGO_TARGET_DIR/$PROFILE/clues-lab"
WORK="$(mktemp -d)"; PG_DIR="$(mktemp -d)"
trap 'kill $PID 2>/dev/null; [ -n "${ON_POSTGRES:-}" ] && pg_stop "$PG_DIR"; rm -rf "$WORK" "$PG_DIR"' EXIT
DB="sqlite://$WORK/load.db"
if [ -n "${ON_POSTGRES:-}" ]; then DB="$(pg_start "$PG_DIR")/load"; fi
# A 300-item SST-2-shaped task (TEST_ITEMS; written here), a researcher, and two open zero-shot studies:
# one to fill with 300k rows, one with room for the crowd.
mkdir -p "$WORK/data/SST-2"
python3 - "$WORK/data/SST-2" "$TEST_ITEMS" <<'PY'
import json, sys
def w(name, ids):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for i in ids:
            label = "positive" if i % 2 == 0 else "negative"
            text = f"review {i}: a {'bright, moving' if label == 'positive' else 'dull, tired'} film"
            f.write(json.dumps({"answer": [label], "question": "positive or negative?", "id": i, "context": text}) + "\n")
w("sst_test.jsonl", range(1000, 1000 + int(sys.argv[2])))
w("sst_train_10_1.jsonl", range(10))
PY
"$BIN" --database "$DB" import clues "$WORK/data" >/dev/null
CLUES_PASSWORD=bench-password "$BIN" --database "$DB" user add bench --role researcher
"$BIN" --database "$DB" study create --task SST-2 --name exports --scenarios 0 --open >/dev/null
"$BIN" --database "$DB" study create --task SST-2 --name crowd --scenarios 0 --annotators 100000 --open >/dev/null
"$BIN" --database "$DB" load fill --study 1 --rows "$FILL_ROWS"
if [ -n "${WATCH_OWN:-}" ]; then "$BIN" --database "$DB" load fill --study 2 --rows "$FILL_ROWS"; fi
"$BIN" --database "$DB" serve --addr 127.0.0.1:0 --no-demo --trust-proxy \
  --new-workers-per-address 1000000 --site-root "$(site_dir "$PROFILE")" > "$WORK/serve.out" 2>"$WORK/serve.err" &
PID=$!
until grep -q "listening on" "$WORK/serve.out" 2>/dev/null; do sleep 0.2; done
URL="$(sed -n 's/^listening on //p' "$WORK/serve.out")"
T=(--url "$URL" --pid "$PID" --study 2 --workers "$WORKERS" --seconds "$SECONDS_EACH")
if [ -n "${ARRIVALS:-}" ]; then
  for w in $ARRIVALS; do "$BIN" load crowd --url "$URL" --pid "$PID" --study 2 --workers "$w" --seconds "$SECONDS_EACH" --answers-per-worker 5; done
  exit 0
fi
if [ -n "${OTHER_STUDY:-}${WATCH_OWN:-}" ]; then
  CLUES_PASSWORD=bench-password "$BIN" load other-study "${T[@]}" --user bench --watched "$([ -n "${WATCH_OWN:-}" ] && echo 2 || echo 1)"
  exit 0
fi
if [ -n "${CROWD_FIRST:-}" ]; then
  CLUES_PASSWORD=bench-password "$BIN" load crowd-first "${T[@]}" --user bench
  exit 0
fi
if [ -n "${CROWD_ONLY:-}" ]; then
  # CROWD_ONLY="8 32 128": crowd load alone at each number of workers.
  for w in $CROWD_ONLY; do "$BIN" load crowd --url "$URL" --pid "$PID" --study 2 --workers "$w" --seconds "$SECONDS_EACH"; done
  exit 0
fi
echo "== crowd load ($WORKERS workers, ${SECONDS_EACH} s)"
"$BIN" load crowd "${T[@]}"
echo "== login flood (150 concurrent, each from its own address)"
"$BIN" load login-flood "${T[@]}" --logins 150
echo "== exports of 300k rows, dashboards during crowd load, ${SOAK} s export soak"
CLUES_PASSWORD=bench-password "$BIN" load export-soak "${T[@]}" --user bench --soak "$SOAK"
