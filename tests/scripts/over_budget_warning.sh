#!/usr/bin/env bash
# scripts/lib/ctest-stage.sh's warning for a run over its budget, as scripts/test.sh runs
# it (set -euo pipefail): with a real run's number of tests (over a thousand, more than a
# pipe holds), it must print the three slowest stages and the ten slowest tests and
# return 0. It once died of SIGPIPE there (`sort | head`), turning a passed CI run into
# exit 141.
set -euo pipefail
source "$1/scripts/lib/ctest-stage.sh"
test_times=$(mktemp)
trap 'rm -f "$test_times"' EXIT
for i in $(seq 1 3000); do
  printf 'build (/tmp/ci-run/attrib/build)\tSomeSuite.SomeRatherLongTestNameNumber%05d\t%d.%02d\n' "$i" $((i % 97)) $((i % 100))
done >"$test_times"
stage_names=(build "ctest" "clang build" "Slurm 24.11" "ASan/UBSan unit")
stage_seconds=(1617 700 1182 604 197)
SECONDS=$((run_budget_seconds + 1))
out=$(warn_over_budget 2>&1)
status=$?
[ "$status" = 0 ] || { echo "warn_over_budget returned $status" >&2; exit 1; }
grep -q "slowest stages:" <<<"$out" || { echo "no slowest stages in: $out" >&2; exit 1; }
[ "$(grep -c ' s  SomeSuite' <<<"$out")" = 10 ] || { echo "not ten slowest tests in: $out" >&2; exit 1; }
first=$(grep -A1 'slowest stages:' <<<"$out" | tail -n1)
[[ $first == *"1617 s  build"* ]] || { echo "the slowest stage is not first: $first" >&2; exit 1; }
echo PASS
