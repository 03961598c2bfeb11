#!/usr/bin/env bash
# docs_drift.py catches what it is there to catch: on a copy of the docs, each kind of
# drift is planted once and must make its check fail, naming the file and line.
#   docs_drift_test.sh PYTHON3 ATTRIBUTIOND ATTRIB_SHOW SOURCE_DIR
set -euo pipefail
python=$1 attributiond=$2 show=$3 src=$(cd "$4" && pwd)
drift="$python $src/tests/docs/docs_drift.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A tree with copies of what the checks read and plant into (docs, README, packaging)
# and links to the rest of the checkout (read only).
fresh_tree() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -r "$src/docs" "$src/README.md" "$src/packaging" "$work/tree/"
  for entry in "$src"/*; do
    case ${entry##*/} in docs | README.md | packaging | build | build-*) continue ;; esac
    ln -s "$entry" "$work/tree/${entry##*/}"
  done
}
# expect_failure CHECK PATTERN ARGS...: the check fails and says PATTERN.
expect_failure() {
  local check=$1 pattern=$2 out
  shift 2
  if out=$($drift "$check" "$work/tree" "$@" 2>&1); then fail "$check passed with the planted drift"; fi
  grep -q -- "$pattern" <<<"$out" || fail "$check did not say '$pattern': $out"
  echo "ok: $check caught: $(grep -m1 -- "$pattern" <<<"$out")"
}

fresh_tree
$drift paths "$work/tree" >/dev/null || fail "paths fails on the real docs"
echo 'See `scripts/no-such-script.sh`.' >> "$work/tree/docs/spank.md"
expect_failure paths "docs/spank.md:[0-9]*: names scripts/no-such-script.sh"

fresh_tree
printf '\n```yaml\ncollectors:\n  journald:\n    directory: /tmp\n```\n' >> "$work/tree/docs/collectors.md"
expect_failure configs "docs/collectors.md:[0-9]*: the configuration example does not load" "$attributiond"

fresh_tree
printf '\n```\nattrib-show --no-such-option 4242\n```\n' >> "$work/tree/docs/admin-guide.md"
expect_failure commands "docs/admin-guide.md:[0-9]*: .attrib-show --no-such-option 4242. does not parse" "$show"

fresh_tree
sed -i 's/, `attrib-submit` |/ |/' "$work/tree/docs/admin-guide.md"
expect_failure packages "attrib-tools installs attrib-submit"
echo "docs_drift.py catches every planted drift"
