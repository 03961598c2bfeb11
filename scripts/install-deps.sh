#!/usr/bin/env bash
# Installs every Debian package attrib needs to build, test and run the demo, on Debian 12
# (bookworm, Slurm 22.05) or Debian 13 (trixie, Slurm 24.11).
# Idempotent: asks dpkg first and touches apt only when something is missing.
# Quiet unless it fails (then apt's output is shown). Run as root.
#   ATTRIB_DEPS=core  only what builds attrib and runs the demo and the real-cluster tests
#                     (no fuzzing toolchain, browser, RPM tools or benchmark references):
#                     the Slurm 24.11 stage of scripts/test.sh (scripts/in-debian13.sh)
#   ATTRIB_DEPS=build only what compiles attrib, and debootstrap: what scripts/test.sh needs
#                     before its main build (the rest installs beside that build, and the
#                     Slurm 24.11 stage's Debian 13 root is made there too)
set -euo pipefail
# libFuzzer's runtime comes with the release's default clang.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
case "$codename" in
  trixie) clang_runtime=libclang-rt-19-dev ;;
  *) clang_runtime=libclang-rt-14-dev ;;
esac

build_packages=(
  cmake g++ make ninja-build pkg-config git ccache
  libslurm-dev libsystemd-dev libprotobuf-dev protobuf-compiler libgrpc++-dev
  protobuf-compiler-grpc libsqlite3-dev libgtest-dev libgmock-dev libyaml-cpp-dev
  libre2-dev libvectorscan-dev libcli11-dev libspdlog-dev nlohmann-json3-dev
  libcurl4-openssl-dev libmunge-dev libbenchmark-dev libcpp-httplib-dev libzstd-dev zlib1g-dev
  python3                 # the build's configure step finds it for the tests it registers
)
# scripts/in-debian.sh's Debian roots (the Slurm 24.11 stage of scripts/test.sh).
root_packages=(debootstrap)
fuzz_packages=(clang "$clang_runtime")  # scripts/fuzz.sh: clang++ and libFuzzer (libclang_rt.fuzzer-x86_64.a)
# A real Slurm cluster on one machine (scripts/cluster.sh).
cluster_packages=(
  slurmctld slurmd slurmdbd slurm-client munge mariadb-server mariadb-client
  procps iproute2 util-linux
)
# Real log sources and tools used by the demo and the real-cluster tests.
core_tool_packages=(systemd systemd-journal-remote sqlite3 python3 curl ca-certificates jq)
# Tools of the rest of the suite.
tool_packages=(
  prometheus
  rpm cpio                # rpmbuild, rpm -qlp/-qRp, rpm2cpio into cpio: scripts/build-rpms.sh
  chromium nodejs         # the dashboard in headless Chromium via playwright-core (tests/browser)
  ripgrep linux-perf      # bench/: the extraction reference and its profile (docs/benchmarks.md)
  python3-jsonschema      # tests/docs: the API's example requests against docs/schemas/
)

deps=${ATTRIB_DEPS:-all}
case "$deps" in build | core | all) ;; *) echo "install-deps: ATTRIB_DEPS must be build, core or all" >&2; exit 2 ;; esac
wanted=("${build_packages[@]}")
[ "$deps" = build ] || wanted+=("${cluster_packages[@]}" "${core_tool_packages[@]}")
[ "$deps" = core ] || wanted+=("${root_packages[@]}")
if [ "$deps" = all ]; then
  wanted+=("${fuzz_packages[@]}" "${tool_packages[@]}")
  # Debian's nodejs comes without npm; NodeSource's bundles it (and conflicts with Debian's npm).
  command -v npm >/dev/null || wanted+=(npm)
fi

# One dpkg-query for all packages keeps the no-op case fast; unknown names print nothing.
installed=" $(dpkg-query -W -f='${Package}:${db:Status-Status} ' "${wanted[@]}" 2>/dev/null || true) "
missing=()
for package in "${wanted[@]}"; do
  [[ "$installed" == *" $package:installed "* ]] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-deps: failed to install: ${missing[*]}" >&2
  exit 1
fi
