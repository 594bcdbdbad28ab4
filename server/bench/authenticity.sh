#!/usr/bin/env bash
# Authenticity benchmark: a server on a fresh database with a 40-item SST-2-shaped task of
# 40-word reviews, then `clues-lab load authenticity`: 500 honest and 500 assisted sessions over
# the API, each answer with the page's signals as `domain::authenticity::simulate` draws them;
# prints the share of each the report flags. Usage: bash server/bench/authenticity.sh [honest]
# [assisted]; PROFILE=debug uses the debug build (the rates do not depend on it).
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
HONEST="${1:-500}"; ASSISTED="${2:-500}"; PROFILE="${PROFILE:-release}"
source "$ROOT/server/bench/common.sh"
BIN="$(bench_binary)"
WORK="$(mktemp -d)"; trap 'kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
DB="sqlite://$WORK/authenticity.db"
sst_task "$WORK/data" 40 1000 1040
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
