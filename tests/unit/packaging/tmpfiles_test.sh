#!/bin/bash
# The shipped tmpfiles.d rules, applied by the real systemd-tmpfiles --clean to a fake
# root: old task records and old refused reports go; new ones, and every pending spool
# file however old, stay.
set -euo pipefail
src=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
spool=$root/var/spool/attrib
mkdir -p "$spool/tasks/101" "$spool/tasks/202" "$spool/bad"
old='40 days ago'
touch -d "$old" "$spool/tasks/101/rank0" "$spool/bad/old.pb" "$spool/pending-303.pb"
touch -d "$old" "$spool/tasks/101"
touch "$spool/tasks/202/rank0" "$spool/bad/new.pb"
# Twenty days: past the task records' 14, inside bad/'s 30.
touch -d '20 days ago' "$spool/tasks/202/rank1" "$spool/bad/middle.pb"

systemd-tmpfiles --clean --root="$root" "$src/packaging/tmpfiles.d/attrib-spank.conf" \
  "$src/packaging/tmpfiles.d/attrib-epilog.conf"

fail=0
gone() { if [ -e "$spool/$1" ]; then echo "FAIL: $1 should have been cleaned"; fail=1; fi; }
kept() { if [ ! -e "$spool/$1" ]; then echo "FAIL: $1 should have been kept"; fail=1; fi; }
gone tasks/101
gone tasks/202/rank1
gone bad/old.pb
kept tasks/202/rank0
kept bad/new.pb
kept bad/middle.pb
kept pending-303.pb
[ "$fail" = 0 ] && echo "tmpfiles rules: cleaned and kept as shipped"
exit "$fail"
