#!/usr/bin/env bash
# A head that accepts the hook's connection and never answers (hung, or its host
# overloaded), with epilog.delivery rpc (the hook spools the job, then attrib-epilog-send
# sends it): the sender gives up at its deadline (epilog.deadline_ms), leaves the job
# spooled and exits 0, so EpilogSlurmctld never stalls slurmctld. Once the hung listener is gone and
# the real attributiond runs, it drains the spool: the job is attributed and its Comment
# written, once. No node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_hung_head
epilog_delivery rpc
deadline_ms=$(sed -n 's/^  deadline_ms: \([0-9]*\)$/\1/p' "$run_dir/attrib.yaml")
[ -n "$deadline_ms" ] || fail "no epilog.deadline_ms in the scenario's config"

# The hung head: accepts every connection on the daemon's address, reads what the hook
# sends and never writes a byte; logs each connection's lifetime (accept to the hook's
# close), in ms.
/usr/bin/python3 -u - "${DAEMON_ADDR%:*}" "${DAEMON_ADDR##*:}" > "$run_dir/hung.log" 2>&1 <<'PY' &
import socket, sys, threading, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((sys.argv[1], int(sys.argv[2])))
srv.listen(16)
print("listening", flush=True)
def hold(conn):
    accepted = time.monotonic()
    received = 0
    while True:
        data = conn.recv(65536)
        if not data:
            break
        received += len(data)
    print("connection held %d ms, %d bytes received" % ((time.monotonic() - accepted) * 1000, received), flush=True)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=hold, args=(conn,), daemon=True).start()
PY
hung_pid=$!
trap 'kill "$hung_pid" 2>/dev/null || true; stop_attributiond' EXIT
for _ in $(seq 50); do grep -q listening "$run_dir/hung.log" && break; sleep 0.1; done
grep -q listening "$run_dir/hung.log" || fail "the hung listener did not start: $(cat "$run_dir/hung.log")"

job=$(submit -N1 -w n2 --wrap 'exit 0')
# Both hooks (EpilogSlurmctld and jobcomp/script) connect, wait out their deadline and spool.
for _ in $(seq 150); do
  [ "$(grep -c '^connection held' "$run_dir/hung.log")" -ge 2 ] && break
  sleep 0.1
done
note "hung head: $(grep -c '^connection held' "$run_dir/hung.log") connections: $(grep '^connection held' "$run_dir/hung.log" | cut -d' ' -f3 | paste -sd' ') ms"
[ "$(grep -c '^connection held' "$run_dir/hung.log")" -ge 2 ] || fail "the hooks did not connect to the hung head: $(cat "$run_dir/hung.log")"
# Each hook left at its deadline (not earlier: it did wait on the head; not much later).
while read -r held; do
  [ "$held" -ge $((deadline_ms / 2)) ] && [ "$held" -le $((deadline_ms + 500)) ] ||
    fail "a hook held its connection ${held} ms (deadline ${deadline_ms} ms)"
done < <(grep '^connection held' "$run_dir/hung.log" | cut -d' ' -f3)

# Spooled, and soon: from the job's end in slurmctld's log to the last spool file.
mapfile -t spooled < <(ls "$run_dir/spool/lab_${job}_"*.jobended 2>/dev/null)
[ ${#spooled[@]} -ge 1 ] || fail "job $job not spooled: $(ls "$run_dir/spool")"
ended=$(sed -n "s/^\[\([^]]*\)\] _job_complete: JobId=$job done\$/\1/p" "$ATTRIB_E2E_CLUSTER_DIR/log/slurmctld.log" | tail -n 1)
[ -n "$ended" ] || fail "no end of job $job in slurmctld's log"
ended_ms=$(( $(date -d "$ended" +%s%N) / 1000000 ))
last_ms=$(( $(stat -c %.3Y "${spooled[@]}" | sort -n | tail -n 1 | tr -d .) ))
hook_ms=$((last_ms - ended_ms))
note "job $job ended at $ended; spooled ${hook_ms} ms later (${#spooled[@]} files)"
[ "$hook_ms" -le $((deadline_ms + 2000)) ] || fail "the hook spooled job $job ${hook_ms} ms after it ended (deadline ${deadline_ms} ms)"
# slurmctld was not held up: the job left COMPLETING (EpilogSlurmctld done).
for _ in $(seq 50); do [ "$(squeue -h -j "$job" -o %T 2>/dev/null)" != COMPLETING ] && break; sleep 0.1; done
[ "$(squeue -h -j "$job" -o %T 2>/dev/null)" != COMPLETING ] || fail "job $job still COMPLETING: the hook stalls slurmctld"

# The hung head goes away, the real one comes up on the same address and drains the spool.
kill "$hung_pid"
wait "$hung_pid" 2>/dev/null || true
for _ in $(seq 50); do ss -Hltn "sport = :${DAEMON_ADDR##*:}" | grep -q LISTEN || break; sleep 0.1; done
start_daemon
await_verdict "$job"
expect_eq "$(verdict "$job" .domain)" NONE "domain"
expect_eq "$(verdict "$job" .terminal_state)" COMPLETED "terminal state"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" "" "nodes blamed"
expect_eq "$(sacct_field "$job" State)" COMPLETED "sacct state"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the Comment ($comment)"
expect_contains "$comment" "attrib: NONE" "sacct comment"
expect_spool_drained
expect_eq "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --all --json "$job" | jq -s length)" 1 "runs archived for job $job"
expect_no_node_drained
echo PASS
