# Sourced by scripts/test.sh and scripts/test-cluster-core.sh: the stages of a run, each
# named in one closing line; a ctest stage fails when a test does not run. test.sh also
# writes them to a machine-readable record (write_run_record) and warns when the run is
# over its budget (warn_over_budget).
#
source "$(dirname "${BASH_SOURCE[0]}")/source-commit.sh"
stages=()         # " LABEL (S s)" or " STAGE: N tests, ... (S s)", for the closing line
stage_names=()    # the same stages, for the record: name,
stage_seconds=()  # its seconds,
stage_tests=()    # and how many tests it ran (0 for a stage that is no ctest run)
test_times=""     # a file for "STAGE<TAB>TEST<TAB>SECONDS" per test, where the caller wants them

# stages_summary LABEL RC: the closing line of a run of stages, whatever stopped it:
# "LABEL: PASSED in N s -- <each stage>" or "LABEL: FAILED (exit RC) after N s -- ...".
stages_summary() {
  local label=$1 rc=$2 done_stages
  done_stages=$(IFS=';'; echo "${stages[*]:-no stage finished}")
  if [ "$rc" = 0 ]; then
    echo "$label: PASSED in $SECONDS s -- $done_stages"
  else
    echo "$label: FAILED (exit $rc) after $SECONDS s -- $done_stages"
  fi
}

# add_stage NAME SECONDS TESTS TEXT: one finished stage: TEXT for the closing line, the
# rest for the record.
add_stage() {
  stage_names+=("$1")
  stage_seconds+=("$2")
  stage_tests+=("$3")
  stages+=(" $4")
}

# timed_stage LABEL COMMAND...: runs COMMAND; once it succeeds, " LABEL (S s)" is a stage.
timed_stage() {
  local label=$1 started=$SECONDS
  shift
  "$@"
  add_stage "$label" $((SECONDS - started)) 0 "$label ($((SECONDS - started)) s)"
}

# run_ctest STAGE ARGS...: ctest with ARGS; a test that did not run (skipped for a missing
# prerequisite, or not run at all) fails the stage: everything this suite needs is
# installed by install-deps.sh, so a skip here means a check silently went missing. On
# success it appends " STAGE: N tests, 0 failed, 0 skipped (S s)" to the array `stages`.
# Each test's time goes to $test_times either way.
run_ctest() {
  local stage=$1 log started=$SECONDS rc=0
  shift
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  # "  12/600 Test  #12: name ..........   Passed    3.21 sec"
  [ -z "$test_times" ] ||
    sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\1\t\2/p' "$log" |
    awk -v stage="$stage" '{print stage "\t" $0}' >>"$test_times"
  local total failed not_run
  total=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/.*% tests passed, \([0-9]*\) tests failed.*/\1/p' "$log" | tail -1)
  not_run=$(sed -n '/tests did not run:/,/^$/p' "$log" | grep -c '^[[:space:]]*[0-9]* - ' || true)
  [ "$rc" = 0 ] || why_tests_failed "$log"
  rm -f "$log"
  [ "$rc" = 0 ] || return "$rc"
  if [ "$not_run" != 0 ]; then
    echo "$stage: $not_run test(s) did not run; CI runs every test (see the list above)" >&2
    return 1
  fi
  if [ -z "$total" ]; then
    echo "$stage: ctest ran no test" >&2
    return 1
  fi
  add_stage "$stage" $((SECONDS - started)) "$total" \
    "$stage: $total tests, ${failed:-?} failed, 0 skipped ($((SECONDS - started)) s)"
}

# why_tests_failed LOG: each failed test's own reason (an e2e scenario's "FAIL: ..." line,
# a GoogleTest failure and the two lines after it), repeated after ctest's summary: the
# output above it may be thousands of lines, and CI shows only a run's last lines.
why_tests_failed() {
  echo "--- why the failed tests failed (their full output is above):"
  { grep -E -A2 '^FAIL: |: Failure$' "$1" || echo "(none printed a reason)"; } | first_lines 40
}

# first_lines N: the first N lines of its input, reading all of it: `head` would leave
# the writer to die of SIGPIPE once the input outgrows the pipe, which pipefail and set -e
# turn into the whole run's exit status (141, a passed run reported failed).
first_lines() { awk -v n="$1" 'NR <= n'; }

# slowest_tests N: the N slowest tests of the run, as $test_times has them (TSV).
slowest_tests() { sort -t $'\t' -k3,3 -g -r "$test_times" | first_lines "$1"; }

# write_run_record FILE RC: the run as JSON -- when, which commit, the result, the total
# and every finished stage's seconds, and the ten slowest tests -- for tools and for
# docs/benchmarks.md's CI table.
write_run_record() {
  local file=$1 rc=$2 commit i
  commit=$(source_commit "$(dirname "${BASH_SOURCE[0]}")/../..")
  {
    printf '{\n  "finished": "%s",\n  "commit": "%s",\n  "passed": %s,\n  "total_seconds": %d,\n' \
      "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$commit" "$([ "$rc" = 0 ] && echo true || echo false)" "$SECONDS"
    printf '  "budget_seconds": %d,\n  "stages": [' "$run_budget_seconds"
    for i in "${!stage_names[@]}"; do
      [ "$i" = 0 ] || printf ','
      printf '\n    {"name": %s, "seconds": %d, "tests": %d}' \
        "$(json_string "${stage_names[$i]}")" "${stage_seconds[$i]}" "${stage_tests[$i]}"
    done
    printf '\n  ],\n  "slowest_tests": ['
    slowest_tests 10 | awk -F'\t' '
      { gsub(/["\\]/, "", $1); gsub(/["\\]/, "", $2)
        printf "%s\n    {\"stage\": \"%s\", \"test\": \"%s\", \"seconds\": %s}", (NR > 1 ? "," : ""), $1, $2, $3 }'
    printf '\n  ]\n}\n'
  } >"$file"
}

# json_string S: S as a JSON string (stage labels are plain text: quotes and backslashes
# are all that needs escaping).
json_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

# The run's budget: CI's hard limit is 90 minutes; the run is kept under half of it.
run_budget_seconds=${ATTRIB_TEST_BUDGET_SECONDS:-2700}

# warn_over_budget: past the budget, a warning naming the three slowest stages and the ten
# slowest tests, so the run that crossed it says where to look.
warn_over_budget() {
  [ "$SECONDS" -gt "$run_budget_seconds" ] || return 0
  local i
  {
    echo "WARNING: the test run took $SECONDS s, over its budget of $run_budget_seconds s (CI's limit is 5400 s)."
    echo "  slowest stages:"
    for i in "${!stage_names[@]}"; do printf '%s\t%s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"; done |
      sort -g -r | first_lines 3 | awk -F'\t' '{printf "%8d s  %s\n", $1, $2}'
    echo "  slowest tests:"
    slowest_tests 10 | awk -F'\t' '{printf "%8.1f s  %s (%s)\n", $3, $2, $1}'
  } >&2
}

# Stages that run beside the foreground: while the e2e scenarios mostly wait on a real
# cluster (a few percent of the CPU), compiles that no test of the foreground needs run
# meanwhile, at lower priority; while the sanitizer and fuzz stages keep the CPU busy, the
# Slurm 24.11 stage's scenarios (mostly waiting on their own cluster) run beside them.
#   start_background_stages [--nice N] [--beside WHAT] LOG LABEL1 CMD1 [LABEL2 CMD2 ...]
# runs each CMD (one word: a command or function name) in turn at niceness N (default 10;
# 0 keeps the foreground's), output to LOG, stopping at the first that fails;
# collect_background_stages waits, shows LOG, and adds each that finished as a stage (its
# own seconds, overlapping the foreground's, "beside WHAT": default "the tests");
# stop_background_stages ends them when the run stops early. One set at a time.
start_background_stages() {
  local niceness=10
  background_beside="the tests"
  while [ $# -gt 0 ]; do
    case "$1" in
      --nice) niceness=$2; shift 2 ;;
      --beside) background_beside=$2; shift 2 ;;
      *) break ;;
    esac
  done
  background_log=$1
  shift
  background_results=$(mktemp /tmp/attrib-background.XXXXXX)
  (
    # What it starts inherits the priority.
    [ "$niceness" = 0 ] || renice -n "$niceness" -p "$BASHPID" >/dev/null
    while [ $# -ge 2 ]; do
      started=$SECONDS rc=0
      "$2" >>"$background_log" 2>&1 || rc=$?
      printf '%s\t%s\t%s\n' "$1" $((SECONDS - started)) "$rc" >>"$background_results"
      [ "$rc" = 0 ] || exit "$rc"
      shift 2
    done
  ) &
  background_pid=$!
}

stop_background_stages() {
  [ -n "${background_pid:-}" ] && kill -0 "$background_pid" 2>/dev/null || return 0
  kill_tree "$background_pid"
  wait "$background_pid" 2>/dev/null || true
}

# kill_tree PID: PID and every process below it.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

collect_background_stages() {
  local rc=0 label seconds stage_rc
  wait "$background_pid" || rc=$?
  background_pid=
  echo "---- beside $background_beside ($background_log):"
  cat "$background_log"
  while IFS=$'\t' read -r label seconds stage_rc; do
    [ "$stage_rc" = 0 ] || { echo "$label: FAILED (exit $stage_rc)" >&2; continue; }
    add_stage "$label" "$seconds" 0 "$label, beside $background_beside ($seconds s)"
  done <"$background_results"
  rm -f "$background_results"
  return "$rc"
}
