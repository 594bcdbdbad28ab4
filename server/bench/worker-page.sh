#!/usr/bin/env bash
# The worker page's first load on emulated Fast 3G (bytes on the wire, time to interactive),
# on the release build; fails when over 300 KiB or 3 s. Usage: server/bench/worker-page.sh [runs]
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || bash .ci/build release
cd end2end
RUNS="${1:-3}" CLUES_BIN="$CARGO_TARGET_DIR/release/clues-lab" CLUES_SITE_ROOT="$(site_dir release)" node perf.mjs
