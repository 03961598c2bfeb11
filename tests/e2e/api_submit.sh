#!/usr/bin/env bash
# The attribution API on the real head, for a job Slurm never ran: a Kubernetes job's
# evidence bundle (docs/examples/api/kubernetes-xid79, a real incident's lines) sent
#   - by root with attrib-submit over gRPC and MUNGE: trusted, GPU_HARDWARE (Xid 79);
#   - by an ordinary user, as their own attempt: their kernel lines are their word, so
#     the verdict is low confidence and acts on nothing; root's attempt is not theirs;
#   - with curl to POST /v1/attribute and a service token (attrib-submit --print-request);
# each archived under the other scheduler's cluster, shown by attrib-show, and nothing
# written to Slurm or drained.
source "$(dirname "$0")/lib.sh"
setup_run api_submit
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'kueue-connector %s\n' "$token" > "$run_dir/api-tokens"
chmod 600 "$run_dir/api-tokens"
api=127.0.0.1:7177
sed -i "s|^epilog:\$|api:\n  listen: $api\n  token_file: $run_dir/api-tokens\nepilog:|" "$run_dir/attrib.yaml"
grep -q "^  listen: $api\$" "$run_dir/attrib.yaml" || fail "cannot set api.listen"
start_daemon
submit=$ATTRIB_E2E_DIR/bin/attrib-submit
bundle() {  # bundle NAME JOB_ID: the example with its own job id, readable by the user
  cp -R "$ATTRIB_SOURCE_DIR/docs/examples/api/kubernetes-xid79" "$run_dir/$1"
  jq --arg id "$2" '.job_id = $id' "$ATTRIB_SOURCE_DIR/docs/examples/api/kubernetes-xid79/job.json" > "$run_dir/$1/job.json"
  chmod -R a+rX "$run_dir/$1"
}

note "root, over gRPC with MUNGE"
bundle root k8s-root
out=$("$submit" --server "$DAEMON_ADDR" --munge-socket "$ATTRIB_MUNGE_SOCKET" "$run_dir/root") || fail "attrib-submit: $out"
expect_contains "$out" "Archived as job k8s-root run 0 on cluster akash-pdx" "attrib-submit's answer"
expect_contains "$out" "Run by kubernetes" "the verdict's scheduler"
expect_contains "$out" "Domain:       GPU_HARDWARE" "root's verdict"
expect_contains "$out" "gpu.fallen_off_bus" "root's root cause"
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --cluster akash-pdx k8s-root) || fail "attrib-show: $shown"
expect_contains "$shown" "Run by kubernetes" "attrib-show of the API's verdict"
expect_eq "$(sqlite3 "$run_dir/attrib.db" "select scheduler, status from jobs where job_id='k8s-root'")" \
  "kubernetes|done" "the archive's row"

note "an ordinary user"
bundle user k8s-user
out=$(as_user "$submit" --server "$DAEMON_ADDR" --munge-socket "$ATTRIB_MUNGE_SOCKET" --json "$run_dir/user") ||
  fail "attrib-submit as nobody: $out"
expect_eq "$(jq -r .confidence <<<"$out")" low "the user's verdict's confidence"
expect_eq "$(jq -r .recommended_action <<<"$out")" NONE "the user's verdict's action"
expect_eq "$(jq -r '[.unexplained[] | select(.kind == "gpu.xid") | .trusted] | unique | join(",")' <<<"$out")" false \
  "the user's Xid lines"
if stolen=$(as_user "$submit" --server "$DAEMON_ADDR" --munge-socket "$ATTRIB_MUNGE_SOCKET" "$run_dir/root" 2>&1); then
  fail "an ordinary user read root's attempt by handing it in again: $stolen"
fi
expect_contains "$stolen" "judged for another caller" "root's attempt handed in by the user"

note "a service token, with curl"
bundle curl k8s-curl
"$submit" --print-request "$run_dir/curl" > "$run_dir/request.json" || fail "attrib-submit --print-request"
status=$(curl -sS -o "$run_dir/answer.json" -w '%{http_code}' -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' --data-binary @"$run_dir/request.json" "http://$api/v1/attribute")
expect_eq "$status" 200 "POST /v1/attribute: $(cat "$run_dir/answer.json")"
expect_eq "$(jq -r '.scheduler + " " + .domain + " " + .root_cause.rule' "$run_dir/answer.json")" \
  "kubernetes GPU_HARDWARE gpu.fallen_off_bus" "the token's verdict"
status=$(curl -sS -o "$run_dir/refused.json" -w '%{http_code}' -H "Authorization: Bearer not-$token" \
  --data-binary @"$run_dir/request.json" "http://$api/v1/attribute")
expect_eq "$status" 401 "a wrong token"

expect_no_node_drained "after the API's verdicts"
echo "PASS: any scheduler's job is judged through the API, trusted only from admins and services"
