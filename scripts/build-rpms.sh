#!/usr/bin/env bash
# Builds the RPMs (packaging/rpm/attrib.spec) into OUT_DIR and checks their contents with
# tests/packaging/check-rpms.sh. Two ways, as the spec allows:
#   scripts/build-rpms.sh --tarball [--without-tests] [OUT_DIR]
#       as a packager or an EL build host does: a source tarball of this checkout
#       (attrib-VERSION.tar.gz: tracked and untracked-but-not-ignored files, as git sees
#       them; without git, the tree less .gitignore's top-level entries), and the spec's
#       own %build and %check from it (failpoints off). With
#       --without-tests, no tests are built and %check is skipped (rpmbuild --without
#       tests). Default OUT_DIR: <checkout>/build/rpms. scripts/test.sh builds this way.
#   scripts/build-rpms.sh [BUILD_DIR] [OUT_DIR]
#       packs an existing build tree made by scripts/build.sh (%check runs its unit tests).
#       Default OUT_DIR: <build>/rpms.
# Works on Debian (package `rpm`): the RPM database knows no Debian packages, so
# BuildRequires are not checked (--nodeps).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
top=$(mktemp -d /tmp/attrib-rpmbuild.XXXXXX)
trap 'rm -rf "$top"' EXIT
options=(-bb --nodeps --quiet --define "_topdir $top")
if [ "${1:-}" = --tarball ]; then
  shift
  if [ "${1:-}" = --without-tests ]; then options+=(--without tests); shift; fi
  out=${1:-${ATTRIB_BUILD_DIR:-$src/build}/rpms}
  version=$(sed -n 's/^Version: *//p' "$src/packaging/rpm/attrib.spec")
  mkdir -p "$top/SOURCES"
  tarball=$top/SOURCES/attrib-$version.tar.gz
  source "$src/scripts/lib/checkout-files.sh"
  checkout_tar "$src" "attrib-$version/" | gzip >"$tarball"
  # The spec's %build runs in the unpacked tarball: ccache takes paths below it as
  # relative, so the test tree's objects serve it (scripts/lib/ccache.sh).
  source "$src/scripts/lib/ccache.sh"
  ccache_env "$top/BUILD/attrib-$version"
else
  build=$(cd "${1:-${ATTRIB_BUILD_DIR:-$src/build}}" && pwd)
  out=${2:-$build/rpms}
  options+=(--define "attrib_build_dir $build")
fi
rpmbuild "${options[@]}" "$src/packaging/rpm/attrib.spec" >"$top/rpmbuild.log" 2>&1 ||
  { cat "$top/rpmbuild.log"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
find "$top/RPMS" -name '*.rpm' -exec cp {} "$out" \;
"$src/tests/packaging/check-rpms.sh" "$out"
ls "$out"
