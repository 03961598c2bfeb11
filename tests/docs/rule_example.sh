#!/usr/bin/env bash
# The worked example of docs/rule-writing-guide.md stays true: the YAML shown there is
# the file in docs/examples/site-rules, it loads with the shipped pack, its inline
# examples and its golden fixture pass, and attrib-replay gives the verdict the guide
# describes.
#   rule_example.sh ATTRIB_RULES ATTRIB_REPLAY SOURCE_DIR
set -euo pipefail
rules=$1 replay=$2 src=$3
guide=$src/docs/rule-writing-guide.md
site=$src/docs/examples/site-rules
fixture=$src/docs/examples/fixtures/nhc_scratch_unmounted
fail() { echo "FAIL: $*" >&2; exit 1; }

# The guide's block starts with the file's name as a comment; the file starts with a
# header comment of its own. Compare from `extract:` to the end of the block.
shown=$(awk '/^# docs\/examples\/site-rules\/nhc.yaml$/ {on=1; next} on && /^```/ {exit} on' "$guide")
[ -n "$shown" ] || fail "no nhc.yaml block in $guide"
diff <(sed -n '/^extract:/,$p' "$site/nhc.yaml") <(sed -n '/^extract:/,$p' <<<"$shown") ||
  fail "the guide's YAML differs from $site/nhc.yaml"

"$rules" validate --pack "$src/rules/pack" --site "$site" || fail "attrib-rules validate"
"$rules" test --pack "$src/rules/pack" --site "$site" --fixtures "$src/docs/examples/fixtures" ||
  fail "attrib-rules test"

verdict=$("$replay" --json --pack "$src/rules/pack" --site "$site" "$fixture")
check() { [ "$(jq -r "$1" <<<"$verdict")" = "$2" ] || fail "$1: expected '$2', got '$(jq -r "$1" <<<"$verdict")'"; }
check .domain STORAGE
check .root_cause.rule site.scratch_unmounted
check .root_cause.summary "NHC on gpu006: check_fs_mount: /scratch not mounted"
check '[.symptoms[] | select(.event.kind != "slurm.job_state") | "\(.event.kind)@\(.event.node)"] | join(",")' "nccl.watchdog_timeout@gpu005"
echo PASS
