#!/usr/bin/env bash
# The worker page's first load on a cheap phone (390x844, CPU 4x slower, 150 ms RTT, 1.6 Mbit/s):
# bytes on the wire, time to interactive after Start, the item on the first screen; on the
# release build, for a label study and a span study; fails when either's is over 200 KB
# (200,000 B) or interactive later than 2 s after Start.
# Usage: server/bench/worker-page.sh [runs]
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || bash .ci/build release
cd end2end
RUNS="${1:-3}" CLUES_BIN="$CARGO_TARGET_DIR/release/clues-lab" CLUES_SITE_ROOT="$(site_dir release)" node perf.mjs
