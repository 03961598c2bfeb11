#!/usr/bin/env bash
# Tools find the rule pack without --pack: from the build tree they use the checkout's
# rules/pack (so `build/tools/attrib-replay bundle/` works first time), installed they use
# the packaged /usr/share/attrib/rules, and --pack always wins.
#   pack_default_test.sh SOURCE_DIR ATTRIB_REPLAY ATTRIB_RULES
set -euo pipefail
src=$1 replay=$2 rules=$3
fixture=$src/tests/fixtures/xid79_with_nccl_symptoms
[ -d "$fixture" ] || fixture=$(find "$src/tests/fixtures" -mindepth 1 -maxdepth 1 -type d | sort | head -1)
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$replay" "$fixture") || fail "attrib-replay from the build tree without --pack: $out"
grep -q '^Domain:' <<<"$out" || fail "attrib-replay printed no verdict: $out"
"$rules" validate --help | grep -qF "$src/rules/pack" || fail "attrib-rules in the build tree does not default to $src/rules/pack"

outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT
cp "$replay" "$rules" "$outside/"
"$outside/attrib-rules" validate --help | grep -qF "/usr/share/attrib/rules" ||
  fail "an installed attrib-rules does not default to /usr/share/attrib/rules"
out=$("$outside/attrib-replay" --pack "$src/rules/pack" "$fixture") || fail "--pack is not honoured: $out"
grep -q '^Domain:' <<<"$out" || fail "attrib-replay --pack printed no verdict"
echo "build-tree tools use $src/rules/pack; installed ones /usr/share/attrib/rules; --pack wins"
