#!/usr/bin/env bash
# The layout check must fail, naming the file and line, on an upward include, a namespace
# that does not follow its folder, and an error code missing from the table; and pass on
# the tree as it is.
set -euo pipefail
src=$1
check="$src/tests/layout/check_layout.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$check" "$src" >/dev/null

copy_tree() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  (cd "$src" && find core common slurm rules collectors spank epilog attributiond tools \( -name '*.h' -o -name '*.cpp' \) \
     -exec cp --parents {} "$work/tree" \;)
}

expect_failure() {
  local what=$1 pattern=$2
  if out=$("$check" "$work/tree" 2>&1); then
    echo "FAIL: $what was not caught"; exit 1
  fi
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $what: expected '$pattern' in:"; echo "$out"; exit 1; }
  echo "caught: $what"
}

copy_tree
sed -i '0,/#include "/s//#include "rules\/engine.h"\n#include "/' "$work/tree/collectors/kmsg_collector.cpp"
expect_failure "collectors including the rules engine" "collectors/kmsg_collector.cpp:[0-9]*: collectors/ may not include rules/engine.h"

copy_tree
sed -i '0,/#include "/s//#include "attributiond\/head\/head_daemon.h"\n#include "/' "$work/tree/attributiond/store/job_store.cpp"
expect_failure "the store including the head" "attributiond/store/job_store.cpp:[0-9]*: attributiond/store/ may not include"

copy_tree
sed -i 's/^namespace attrib::store {/namespace attrib::head {/' "$work/tree/attributiond/store/job_store.cpp"
expect_failure "a namespace that does not follow its folder" "namespace attrib::head in attributiond/store/: expected attrib::store"

copy_tree
echo 'const char* kNew = "NEW_E_CODE";' >> "$work/tree/core/types.cpp"
expect_failure "an error code missing from the table" "error code NEW_E_CODE is not in core/error_codes.h"
echo "layout check test passed"
