#!/usr/bin/env bash
# run_sharded.sh N TEST_BINARY [ARGS...]: runs a GoogleTest binary as N shards at once
# (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX: each test runs in exactly one shard), each
# shard's output prefixed with its index, and fails if any shard fails or if the shards
# together ran a different number of tests than the binary lists. For the slurmdbd client
# test: its cases spend their time waiting for slurmdbd to finish their jobs' rows, and
# their jobs fit on the cluster's three nodes side by side.
set -uo pipefail
shards=$1 binary=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$binary" "$@" >"$work/$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}" || status=1
  sed "s/^/[shard $i] /" "$work/$i.log"
done
listed=$("$binary" "$@" --gtest_list_tests | grep -c '^  ')
ran=$(cat "$work"/*.log | grep -c '^\[       OK \]\|^\[  FAILED  \] [A-Za-z0-9_]*\.[A-Za-z0-9_]* (')
if [ "$ran" != "$listed" ]; then
  echo "run_sharded: the shards ran $ran tests, the binary lists $listed" >&2
  status=1
fi
exit "$status"
