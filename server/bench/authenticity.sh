#!/usr/bin/env bash
# Authenticity benchmark: `clues-lab load authenticity` on a fresh database, the sessions of every
# honest and assisted strategy of `domain::authenticity::simulate` sent over the API to the
# binary's own router on a loopback socket with a simulated clock (reading and time away pass on
# it, nobody sleeps); each worker's level read back from the pay sheet. Studies of 12, 40 and
# 200 reviews of 40 words for every strategy (LENGTHS="12 40 200"), and 200 reviews for machine
# copying (the simulated system gets 15% wrong: repeating its errors shows only where there are
# enough of them), with typical honest workers before it as the other humans. Then crowds, each
# a study of its own (CROWDS=0 leaves them out): 40 workers on 200 items of whom 10%, 30% or 60%
# copy one system and finish first; and farms of 2, 5 or 10 paced forging scripts answering from
# one source among 30 honest workers, on 40, 100 and 200 items (no system run); ONLY_CROWDS=1
# runs only these. Prints a table per study and the share of honest sessions low.
# Usage: bash server/bench/authenticity.sh [sessions per strategy] [machine sessions];
# PROFILE=debug uses the debug build (the rates do not depend on it).
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
SESSIONS="${1:-100}"; MACHINE="${2:-100}"; PROFILE="${PROFILE:-release}"
source "$ROOT/server/bench/common.sh"
BIN="$(bench_binary)"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
run() { # run NAME ITEMS SESSIONS [STRATEGIES]
  local db="sqlite://$WORK/$1.db"
  sst_task "$WORK/$1" 40 1000 "$((1000 + $2))"
  "$BIN" --database "$db" import clues "$WORK/$1" >/dev/null
  CLUES_PASSWORD=bench-password "$BIN" --database "$db" user add bench --role researcher
  "$BIN" --database "$db" study create --task SST-2 --name sessions --scenarios 0 --annotators 100000 --open >/dev/null
  echo "== $1: $2 items, ${4:-every strategy}; $3 sessions of each not given its own count"
  CLUES_PASSWORD=bench-password "$BIN" --database "$db" load authenticity --study 1 \
    --sessions "$3" --user bench ${4:+--strategies "$4"}
}
if [ -z "${ONLY_CROWDS:-}" ]; then
  for n in ${LENGTHS:-12 40 200}; do run "every-strategy-$n" "$n" "$SESSIONS"; done
  run machine-copying 200 "$MACHINE" honest-typical,machine-copying,machine-copying-some
fi
[ "${CROWDS:-1}" = 0 ] && exit 0
for copiers in 4 12 24; do
  run "copiers-$copiers-of-40" 200 0 "machine-copying=$copiers,honest-typical=$((40 - copiers))"
done
for items in 40 100 200; do
  for farm in 2 5 10; do
    run "farm-of-$farm-on-$items" "$items" 0 "honest-typical=30,script-forged-and-paced=$farm"
  done
done
