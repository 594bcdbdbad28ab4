#!/usr/bin/env bash
# Regressions seen in one run: builds a base commit beside HEAD and runs the same crowd load
# against each in turn, alternating which goes first, so that a slower day or machine moves
# both. Prints, per number of workers, each build's median submits/s, p99 and slowest answer
# over the rounds and HEAD's ratio to the base.
# Usage: bash server/bench/regress.sh [BASE]   (BASE: a commit or tag; default the newest tag
# before HEAD). SIZES="8 32 128" ROUNDS=3 SECONDS_EACH=10. The base is checked out in a git
# worktree (CLUES_BASE_TREE, default <target>/tree) and built with `cargo build --release` in a
# target directory of its own (CLUES_BASE_TARGET, default ~/.cache/clues-lab/target-base); both
# are kept, so the next run rebuilds only what differs from the last base; each
# build sets up its own fresh database (a 300-item SST-2-shaped task, an open zero-shot study)
# and HEAD's load client drives both. The base must have the same command line (import, study
# create, serve, as of 2026-11). LIVE=1 adds the live-study case (issue 76) to each run: a
# second study filled with LIVE_ROWS synthetic rows (default 42000) whose pay sheet and
# dashboard a researcher asks for every second, quiet and beside 32 workers answering the
# first (HEAD's `load other-study`); its medians per build are printed after the crowd's.
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
source "$ROOT/server/bench/common.sh"
cd "$ROOT"
SIZES="${SIZES:-8 32 128}"; ROUNDS="${ROUNDS:-3}"; SECONDS_EACH="${SECONDS_EACH:-10}"
BASE="${1:-$(git describe --tags --abbrev=0 HEAD^ 2>/dev/null || true)}"
[ -n "$BASE" ] || { echo "no tag before HEAD: give the base commit, e.g. regress.sh HEAD~5" >&2; exit 2; }
BASE_SHA="$(git rev-parse --verify --quiet "$BASE^{commit}")" || { echo "unknown commit: $BASE" >&2; exit 2; }
HEAD_SHA="$(git rev-parse HEAD)"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

log "HEAD ($(git rev-parse --short HEAD)): release build"
HEAD_BIN="$WORK/clues-lab-head"
cp "$(PROFILE=release bench_binary)" "$HEAD_BIN"
log "base ($(git rev-parse --short "$BASE_SHA")): worktree and release build (its own target directory)"
BASE_TARGET="${CLUES_BASE_TARGET:-$HOME/.cache/clues-lab/target-base}"
BASE_TREE="${CLUES_BASE_TREE:-$BASE_TARGET/tree}"
if git -C "$BASE_TREE" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$BASE_TREE" checkout --detach --quiet --force "$BASE_SHA"
else
  mkdir -p "$(dirname "$BASE_TREE")"
  git worktree add --detach --quiet "$BASE_TREE" "$BASE_SHA"
fi
(cd "$BASE_TREE" && CARGO_TARGET_DIR="$BASE_TARGET" cargo build --release -p server --bin clues-lab >&2)
BASE_BIN="$WORK/clues-lab-base"
cp "$BASE_TARGET/release/clues-lab" "$BASE_BIN"

sst_task "$WORK/data" 12 1000 1300
mkdir -p "$WORK/site"
RESULTS="$WORK/results.tsv"

# one_run NAME BIN: a fresh database set up by BIN, its server, HEAD's client at each size.
one_run() {
  local name="$1" bin="$2" dir="$WORK/run-$1"
  rm -rf "$dir"; mkdir -p "$dir"
  local db="sqlite://$dir/load.db"
  "$bin" --database "$db" import clues "$WORK/data" >/dev/null
  "$bin" --database "$db" study create --task SST-2 --name crowd --scenarios 0 \
    --annotators 100000 --open >/dev/null
  if [ -n "${LIVE:-}" ]; then
    "$bin" --database "$db" study create --task SST-2 --name watched --scenarios 0 --open >/dev/null
    "$bin" --database "$db" load fill --study 2 --rows "${LIVE_ROWS:-42000}" >/dev/null
    CLUES_PASSWORD=bench-password "$bin" --database "$db" user add bench --role researcher >/dev/null
  fi
  "$bin" --database "$db" serve --addr 127.0.0.1:0 --no-demo --trust-proxy \
    --new-workers-per-address 1000000 --site-root "$WORK/site" >"$dir/serve.out" 2>"$dir/serve.err" &
  local pid=$!
  PIDS+=("$pid")
  until grep -q "listening on" "$dir/serve.out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.err" >&2; exit 1; }
    sleep 0.2
  done
  local url; url="$(sed -n 's/^listening on //p' "$dir/serve.out")"
  for w in $SIZES; do
    local out line
    out="$("$HEAD_BIN" load crowd --url "$url" --pid "$pid" --study 1 --workers "$w" \
      --seconds "$SECONDS_EACH")"
    line="$(grep -m1 'submits/s' <<<"$out")"
    echo "  $name, $w workers: $line" >&2
    printf '%s\t%s\t%s\n' "$name" "$w" "$line" >>"$RESULTS"
  done
  if [ -n "${LIVE:-}" ]; then
    CLUES_PASSWORD=bench-password "$HEAD_BIN" load other-study --url "$url" --pid "$pid" \
      --study 1 --workers 32 --seconds "$SECONDS_EACH" --user bench --watched 2 \
      | grep "^study 2's" | sed "s/^/  $name: /" | tee -a "$WORK/live.txt" >&2
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for round in $(seq 1 "$ROUNDS"); do
  log "round $round of $ROUNDS"
  if [ $((round % 2)) = 1 ]; then one_run base "$BASE_BIN"; one_run head "$HEAD_BIN"
  else one_run head "$HEAD_BIN"; one_run base "$BASE_BIN"; fi
done

python3 - "$RESULTS" "$(git rev-parse --short "$BASE_SHA")" "$(git rev-parse --short "$HEAD_SHA")" "$ROUNDS" <<'PY'
import re, statistics, sys
path, base, head, rounds = sys.argv[1:]
runs = {}
for line in open(path):
    name, workers, text = line.rstrip("\n").split("\t")
    m = re.search(r"([\d.]+) submits/s, p50 [\d.]+ ms, p99 ([\d.]+) ms, slowest ([\d.]+) ms \((\d+) submits, (\d+) errors", text)
    if not m:
        sys.exit(f"unreadable load line: {text}")
    rate, p99, slowest, _, errors = map(float, m.groups())
    runs.setdefault((int(workers), name), []).append((rate, p99, slowest, errors))
med = lambda rows, i: statistics.median(r[i] for r in rows)
print(f"\nbase {base} against HEAD {head}: medians of {rounds} alternating rounds (submits/s, p99 ms, slowest ms)")
print("| workers | base: submits/s | p99 | slowest | HEAD: submits/s | p99 | slowest | ratio HEAD/base: submits/s | p99 |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for w in sorted({w for w, _ in runs}):
    b, h = runs[(w, "base")], runs[(w, "head")]
    errors = sum(r[3] for r in b + h)
    note = f" ({int(errors)} errors)" if errors else ""
    print(f"| {w} | {med(b,0):,.0f} | {med(b,1):.1f} | {med(b,2):.1f} | {med(h,0):,.0f} | {med(h,1):.1f} | {med(h,2):.1f} | "
          f"{med(h,0)/med(b,0):.2f} | {med(h,1)/med(b,1):.2f}{note} |")
PY
if [ -n "${LIVE:-}" ]; then
  echo; echo "the live-study case, each run (the watched study's pay sheet and dashboard):"
  cat "$WORK/live.txt"
fi
