#!/usr/bin/env bash
# Fails on a new copy: every pair of places that `duplicates` (the workplace's copy finder)
# lists, boilerplate aside, must be between two files already named in .ci/duplicates-known.txt
# (each one looked at and kept on purpose: a migration's two dialects, a test's fixtures).
# Where the command is not installed, says so and checks nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v duplicates >/dev/null; then
  echo "duplicates: not on this machine; no check for new copies"
  exit 0
fi
known=.ci/duplicates-known.txt
found="$(duplicates --most 200 --seconds 120 | grep '^D' | grep -v ' boilerplate' |
  sed -E 's/^D[0-9]+ ([^:]+):[0-9-]+ ~ ([^:]+):[0-9-]+.*/\1 ~ \2/' | sort -u)"
new="$(comm -23 <(printf '%s\n' "$found" | sed '/^$/d') <(grep -v '^#' "$known" | sed '/^$/d' | sort -u))"
if [ -n "$new" ]; then
  echo "duplicates: new copies between these files (merge them, or add the pair to $known with a reason):"
  printf '%s\n' "$new" | sed 's/^/  /'
  exit 1
fi
stale="$(comm -13 <(printf '%s\n' "$found" | sed '/^$/d') <(grep -v '^#' "$known" | sed '/^$/d' | sort -u))"
if [ -n "$stale" ]; then
  echo "duplicates: these known pairs share nothing any more (remove them from $known):"
  printf '%s\n' "$stale" | sed 's/^/  /'
fi
echo "duplicates: no new copies ($(printf '%s\n' "$found" | sed '/^$/d' | wc -l) known pairs)"
