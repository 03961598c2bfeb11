#!/usr/bin/env bash
# Runs COMMAND in a fresh Debian 13 (trixie) root, where Debian's Slurm is 24.11: the
# same as scripts/in-debian.sh --release trixie (a root made once with debootstrap from
# Debian's package registry and cached, a fresh copy of it per run, a copy of this
# checkout at /root/src/attrib, own mount, PID and UTS namespaces, every process and
# mount gone when it ends), with attrib's packages installed by scripts/install-deps.sh:
# once, into a second cached root (in-debian.sh --with-deps), and checked again in the
# copy. ATTRIB_DEPS (default core) is passed to the root: core is what builds attrib and
# runs the demo and the real-cluster tests; all adds the rest.
#   scripts/in-debian13.sh [--keep] COMMAND...
#   scripts/in-debian13.sh --prepare      # only make the cached roots (scripts/test.sh
#                                         # does it while the main build runs)
# Examples:
#   scripts/in-debian13.sh scripts/demo.sh                  # the demo on Slurm 24.11
#   scripts/in-debian13.sh scripts/test-cluster-core.sh     # the real-cluster core on 24.11
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
options=()
deps=${ATTRIB_DEPS:-core}
case "$deps" in core | all) ;; *) echo "in-debian13.sh: ATTRIB_DEPS must be core or all" >&2; exit 2 ;; esac
if [ "${1:-}" = --prepare ]; then exec "$src/scripts/in-debian.sh" --release trixie --with-deps "$deps" --prepare; fi
if [ "${1:-}" = --keep ]; then options+=(--keep); shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [--keep] COMMAND... | --prepare" >&2; exit 2; }
exec "$src/scripts/in-debian.sh" --release trixie --with-deps "$deps" "${options[@]}" -- \
  "export ATTRIB_DEPS=$deps && scripts/install-deps.sh && $*"
