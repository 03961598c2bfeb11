#!/usr/bin/env bash
# Builds the RPMs (packaging/rpm/attrib.spec) from an existing build tree made by
# scripts/build.sh, into OUT_DIR (default <build>/rpms), and checks their contents with
# tests/packaging/check-rpms.sh. Works on Debian (package `rpm`): the RPM database
# knows no Debian packages, so BuildRequires are not checked (--nodeps); %check runs
# the unit tests of that build tree.
#   scripts/build-rpms.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${ATTRIB_BUILD_DIR:-$src/build}}" && pwd)
out=${2:-$build/rpms}
top=$(mktemp -d /tmp/attrib-rpmbuild.XXXXXX)
trap 'rm -rf "$top"' EXIT
rpmbuild -bb --nodeps --quiet \
  --define "_topdir $top" \
  --define "attrib_build_dir $build" \
  "$src/packaging/rpm/attrib.spec" > "$top/rpmbuild.log" 2>&1 || { cat "$top/rpmbuild.log"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
find "$top/RPMS" -name '*.rpm' -exec cp {} "$out" \;
"$src/tests/packaging/check-rpms.sh" "$out"
ls "$out"
