#!/usr/bin/env bash
# Crowd load on SQLite (one server) and on PostgreSQL (1, 2 and 4 servers sharing one database,
# the load spread over them as a balancer would): submits/s, p50/p99 and errors at each number
# of workers, and on PostgreSQL the time answers spent waiting for locks (pg_locks sampled every
# 10 ms: the number of waiting lock requests times 10 ms, summed, per answer). PostgreSQL is a throwaway local cluster (fsync on, as in production); the load
# client runs on the same machine. Usage: bash server/bench/instances.sh [seconds] [workers...]
# VERSIONS=1: on PostgreSQL only, with PG_SERVERS servers (default 2), rounds alternating a
# database with the report versions' triggers (migration 23) and one without them, to show
# what keeping a version per study costs the crowd (issue 76). PROFILE=debug: a debug build.
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
source "$ROOT/server/bench/common.sh"
cd "$ROOT"
SECONDS_EACH="${1:-10}"; shift || true
WORKERS=("${@:-32 128}"); WORKERS=(${WORKERS[*]})
BIN="$(bench_binary)"
WORK="$(mktemp -d)"; PG_DIR="$(mktemp -d)"; PIDS=()
cleanup() { kill "${PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pg_stop "$PG_DIR"; rm -rf "$WORK"; }
trap cleanup EXIT
PG="$(pg_start "$PG_DIR")"
# Production durability on the PostgreSQL side too.
psql -q "$PG/postgres" -c "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
# A 300-item SST-2-shaped task, written here.
mkdir -p "$WORK/data/SST-2"
python3 - "$WORK/data/SST-2" <<'PY'
import json, sys
with open(f"{sys.argv[1]}/sst_test.jsonl", "w") as f:
    for i in range(1000, 1300):
        label = "positive" if i % 2 == 0 else "negative"
        f.write(json.dumps({"answer": [label], "question": "positive or negative?", "id": i, "context": f"review {i}: a film"}) + "\n")
PY
prepare() {
  "$BIN" --database "$1" import clues "$WORK/data" >/dev/null
  "$BIN" --database "$1" study create --task SST-2 --name crowd --scenarios 0 --annotators 1000000 --open >/dev/null
}
# run DB INSTANCES: serve INSTANCES servers on DB, crowd load at each size.
run() {
  local db="$1" n="$2" urls=() i
  PIDS=()
  for i in $(seq "$n"); do
    CLUES_DB_CONNECTIONS=8 "$BIN" --database "$db" serve --addr 127.0.0.1:0 --no-demo \
      --new-workers-per-address 100000000 --site-root "$WORK" >"$WORK/s$i.out" 2>"$WORK/s$i.err" &
    PIDS+=($!)
  done
  for i in $(seq "$n"); do
    until grep -q "listening on" "$WORK/s$i.out" 2>/dev/null; do sleep 0.2; done
    urls+=("$(sed -n 's/^listening on //p' "$WORK/s$i.out")")
  done
  local list; list="$(IFS=,; echo "${urls[*]}")"
  for w in "${WORKERS[@]}"; do
    printf '%s, %s server(s), %s workers: ' "${db%%:*}" "$n" "$w"
    local sampler=""
    if [[ "$db" == postgres* ]]; then
      # One psql session: a count of waiting lock requests, then 10 ms of sleep, over and over.
      python3 -c "import sys; n=int(sys.argv[1])*100; print('SELECT COUNT(*) FROM pg_locks WHERE NOT granted; SELECT pg_sleep(0.01);\n'*n)" "$SECONDS_EACH" \
        | psql -qAt "$db" 2>/dev/null | awk 'NF' >"$WORK/waits" &
      sampler=$!
    fi
    "$BIN" load crowd --url "$list" --study 1 --workers "$w" --seconds "$SECONDS_EACH" | grep submits | tee "$WORK/line"
    if [ -n "$sampler" ]; then
      wait "$sampler" 2>/dev/null || true   # it ends by itself, a little after the load
      local rate; rate="$(grep -o '[0-9.]* submits/s' "$WORK/line" | cut -d' ' -f1)"
      awk -v rate="$rate" -v secs="$SECONDS_EACH" '{ s += $1; n++ } END {
        printf "  lock waits: %.3f ms per answer (%d samples, %.2f s waited)\n", (s * 10) / (rate * secs), n, s / 100 }' "$WORK/waits"
    fi
  done
  kill "${PIDS[@]}"; wait "${PIDS[@]}" 2>/dev/null || true
}
if [ -n "${VERSIONS:-}" ]; then
  prepare "$PG/load"
  prepare "$PG/plain"
  # The report versions' triggers dropped from the second database: its answers move nothing.
  psql -qAt "$PG/plain" -c "SELECT format('DROP TRIGGER %I ON %s;', tgname, tgrelid::regclass)
    FROM pg_trigger WHERE tgname LIKE 'report_%'" | psql -q "$PG/plain"
  for round in $(seq "${ROUNDS:-2}"); do
    echo "== round $round: with the versions, then without"
    for n in ${PG_SERVERS:-2}; do run "$PG/load" "$n"; run "$PG/plain" "$n"; done
  done
  exit 0
fi
SQLITE="sqlite://$WORK/load.db"
prepare "$SQLITE"
run "$SQLITE" 1
prepare "$PG/load"
for n in 1 2 4; do run "$PG/load" "$n"; done
