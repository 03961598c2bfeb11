#!/usr/bin/env bash
# Keeps a finished run's record as the README's source for its time figures:
#   scripts/record-run.sh fresh-clone|fresh-root|demo RECORD [COMMIT]
# RECORD is the file the run wrote (scripts/test.sh: build/test-run.json; scripts/demo.sh:
# build/demo-run.json). COMMIT fills in a record whose run could not read its commit
# (a root without git). The record goes to docs/runs/<kind>.json and the README's block
# is rendered again from docs/runs/ (scripts/readme-figures.py); commit both.
set -euo pipefail
kind=${1:?kind: fresh-clone, fresh-root or demo} record=${2:?the run record} commit=${3:-}
case $kind in fresh-clone | fresh-root | demo) ;; *) echo "record-run.sh: unknown kind '$kind'" >&2; exit 2 ;; esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$src/docs/runs/$kind.json
filter='.'
[ -z "$commit" ] || filter=".commit = \"$commit\""
jq "$filter" "$record" > "$out.tmp"
if [ "$(jq -r .commit "$out.tmp")" = unknown ]; then
  rm -f "$out.tmp"
  echo "record-run.sh: $record does not know its commit; give it as the third argument" >&2
  exit 2
fi
mv "$out.tmp" "$out"
python3 "$src/scripts/readme-figures.py" --write "$src"
echo "recorded $out; README.md's time figures rendered again"
