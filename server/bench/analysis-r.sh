#!/usr/bin/env bash
# The false-alarm benchmark of the bundle's analysis.R (issue 78): STUDIES simulated bundles of
# each path of the scenario test, each built by the report's own code (`clues-lab simulate
# --bundles`): (a) the mixed model, (b) the item variance at zero, (c) the annotator variance at
# zero (the permutation test decides), (d) a label task (every item S1 0 or 1: the logistic
# model beside). analysis.R checks each path's bundles in one R process; printed per path: the
# bundles, the cells checked, the false alarms (cells that differ on these unmodified bundles:
# must be 0), the comparisons by the path R took and the largest |R - report| of each kind of
# cell (the tolerances are set from these). Exits 1 on a false alarm.
# Usage: bash server/bench/analysis-r.sh   STUDIES=300 SEED=20261207 PROFILE=debug (the debug
# build's statistics crates are optimised; release builds the whole server) KEEP=DIR keeps the
# bundles and R's output there. DEFAULT_LMER=1 also runs a copy of the script that fits lmer
# with lme4's default optimiser (as analysis.R did before issue 78), to count its false alarms.
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
source "$ROOT/server/bench/common.sh"
cd "$ROOT"
STUDIES="${STUDIES:-300}"; SEED="${SEED:-20261207}"; PROFILE="${PROFILE:-debug}"
BIN="${BIN:-$(bench_binary)}"
WORK="${KEEP:-$(mktemp -d)}"
mkdir -p "$WORK"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
# R reads a script as it runs it: a copy, so that editing the source meanwhile changes nothing.
cp store/src/analysis*.R "$WORK/"
alarms=0
for path in mixed item-zero annotator-zero logistic no-test; do
  rm -rf "${WORK:?}/$path"
  started=$SECONDS
  "$BIN" simulate --bundles "$WORK/$path" --path "$path" --studies "$STUDIES" --seed "$SEED"
  made=$((SECONDS - started))
  started=$SECONDS
  set +e
  Rscript "$WORK/analysis.R" --quiet "$WORK/$path"/*/ > "$WORK/$path.out" 2>&1
  rc=$?
  set -e
  last="$(tail -n 1 "$WORK/$path.out")"
  bundles="$(grep -c '^bundle ' "$WORK/$path.out")"
  cells="${last%% cells checked*}"
  differ="$(sed -n 's/.* cells checked, \([0-9]*\) differ.*/\1/p' <<< "$last")"
  echo "== ($path) $bundles bundles, $cells cells checked, false alarms: ${differ:-?} (R exit $rc; bundles made in ${made} s, checked in $((SECONDS - started)) s)"
  grep 'Comparisons by R' "$WORK/$path.out" || true
  sed -n '/^The largest/,/^Comparisons/p' "$WORK/$path.out" | sed '1d;$d'
  grep 'DIFFERS' "$WORK/$path.out" | head -n 20 || true
  if [ "$rc" -ne 0 ] || [ "${differ:-1}" != 0 ]; then alarms=$((alarms + 1)); fi
  if [ -n "${DEFAULT_LMER:-}" ]; then
    mkdir -p "$WORK/default"
    cp "$WORK"/analysis_*.R "$WORK/default/"
    sed 's/control = tight_lmer)/control = lmerControl(check.conv.singular = "ignore"))/' \
      "$WORK/analysis.R" > "$WORK/default/analysis.R"
    Rscript "$WORK/default/analysis.R" --quiet "$WORK/$path"/*/ > "$WORK/$path.default.out" 2>&1 || true
    echo "   with lme4's default optimiser for lmer: $(tail -n 1 "$WORK/$path.default.out")"
    grep 'DIFFERS' "$WORK/$path.default.out" | head -n 5 || true
  fi
done
[ "$alarms" -eq 0 ] || { echo "false alarms in $alarms path(s)" >&2; exit 1; }
