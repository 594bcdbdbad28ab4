#!/usr/bin/env bash
# Lighthouse (mobile) on the researcher dashboard of the release build: the Performance score,
# LCP, TBT and CLS of each run and their median; fails when the median score is below 95.
# Installs Lighthouse (end2end/lighthouse, pinned) on first use.
# Usage: server/bench/dashboard-lighthouse.sh [runs]   (SKIP_BUILD=1: the release site as built)
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || bash .ci/build release
[ -d end2end/node_modules ] || npm ci --prefix end2end --no-audit --no-fund
[ -d end2end/lighthouse/node_modules ] || npm ci --prefix end2end/lighthouse --no-audit --no-fund
cd end2end/lighthouse
RUNS="${1:-5}" CLUES_BIN="$CARGO_TARGET_DIR/release/clues-lab" CLUES_SITE_ROOT="$(site_dir release)" node dashboard.mjs
