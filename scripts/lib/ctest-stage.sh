# Sourced by scripts/test.sh and scripts/test-cluster-core.sh: the stages of a run, each
# named in one closing line; a ctest stage fails when a test does not run.
#
stages=()

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

# timed_stage LABEL COMMAND...: runs COMMAND; once it succeeds, " LABEL (S s)" is a stage.
timed_stage() {
  local label=$1 started=$SECONDS
  shift
  "$@"
  stages+=(" $label ($((SECONDS - started)) s)")
}

# run_ctest STAGE ARGS...: ctest with ARGS; a test that did not run (skipped for a missing
# prerequisite, or not run at all) fails the stage: everything this suite needs is
# installed by install-deps.sh, so a skip here means a check silently went missing. On
# success it appends " STAGE: N tests, 0 failed, 0 skipped (S s)" to the array `stages`.
run_ctest() {
  local stage=$1 log started=$SECONDS
  shift
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log"
  local total failed not_run
  total=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/.*% tests passed, \([0-9]*\) tests failed.*/\1/p' "$log" | tail -1)
  not_run=$(sed -n '/tests did not run:/,/^$/p' "$log" | grep -c '^[[:space:]]*[0-9]* - ' || true)
  rm -f "$log"
  if [ "$not_run" != 0 ]; then
    echo "$stage: $not_run test(s) did not run; CI runs every test (see the list above)" >&2
    return 1
  fi
  if [ -z "$total" ]; then
    echo "$stage: ctest ran no test" >&2
    return 1
  fi
  stages+=(" $stage: $total tests, ${failed:-?} failed, 0 skipped ($((SECONDS - started)) s)")
}
