#!/usr/bin/env bash
# Runs a command on a fresh Debian root made from Debian's package registry, with a copy of
# this checkout inside: how a newcomer's machine looks, without a container runtime.
#
#   scripts/in-debian.sh [--release bookworm] [--checkout-at /root/src/attrib] [--keep] -- COMMAND...
#   scripts/in-debian.sh [--release bookworm] --prepare   # only make the cached root
#
# The first run makes a pristine root with debootstrap (minbase, Debian's main, updates and
# security suites) and caches it under ATTRIB_ROOT_CACHE (default /var/cache/attrib/roots);
# every run then works on a fresh copy of it, so nothing from an earlier run is installed.
# The checkout (tracked and untracked-but-not-ignored files, as git sees them; without git,
# as scripts/lib/checkout-files.sh says) is copied to
# --checkout-at, whose parent directories keep Debian's modes (root's home is 0700). COMMAND
# runs there as root in its own mount, PID and UTS namespaces (unshare + chroot): every
# process it starts dies with it and every mount it needs vanishes with it, whatever
# happens. The copy is removed afterwards unless --keep (its path is printed).
# ATTRIB_ROOT_CCACHE=DIR: a host directory mounted as root's compiler cache in the root
# (~/.cache/ccache), so that builds there keep their objects from one run to the next
# (scripts/test.sh's Slurm 24.11 stage); unset, the root starts with an empty cache, as a
# newcomer's machine does.
# --with-deps LEVEL: start from the cached root with scripts/install-deps.sh's LEVEL
# (core or all) packages already installed: a second cache, made from the pristine one
# once per version of install-deps.sh (with --prepare, only that), so that the run's own
# install-deps.sh finds nothing to do. scripts/test.sh prepares it beside its main build,
# for the Slurm 24.11 stage; without it the root is as debootstrap left it.
# Example, the README's two commands with the checkout in root's home:
#   scripts/in-debian.sh -- 'scripts/demo.sh && scripts/test.sh'
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
release=bookworm
checkout_at=/root/src/attrib
keep=0
prepare=0
deps=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release=$2; shift 2 ;;
    --checkout-at) checkout_at=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --prepare) prepare=1; shift ;;
    --with-deps) deps=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--release R] [--checkout-at PATH] [--keep] [--with-deps LEVEL] -- COMMAND..." >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || [ "$prepare" = 1 ] || { echo "in-debian.sh: no command" >&2; exit 2; }
case "$deps" in "" | core | all) ;; *) echo "in-debian.sh: --with-deps takes core or all" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "in-debian.sh: must run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null

cache=${ATTRIB_ROOT_CACHE:-/var/cache/attrib/roots}/$release
mirror=http://deb.debian.org/debian
if [ ! -e "$cache/.complete" ]; then
  echo "in-debian.sh: making a $release root in $cache (once; a few minutes)"
  rm -rf "$cache"
  mkdir -p "$(dirname "$cache")"
  debootstrap --variant=minbase --include=ca-certificates "$release" "$cache" "$mirror" >"$cache.log" 2>&1 ||
    { tail -n 20 "$cache.log" >&2; echo "in-debian.sh: debootstrap failed ($cache.log)" >&2; exit 1; }
  cat >"$cache/etc/apt/sources.list" <<EOF
deb $mirror $release main
deb $mirror $release-updates main
deb http://deb.debian.org/debian-security $release-security main
EOF
  touch "$cache/.complete"
fi

# enter_root ROOT DIR CCACHE_DIR COMMAND: runs COMMAND in DIR inside ROOT, in its own
# namespaces. They end with it: --kill-child takes every process along, and the mounts
# below exist only inside the private mount namespace. unshare ignores SIGTERM while it
# waits, so a stop of this script is passed on as SIGKILL.
enter_root() {
  local status=0
  unshare --mount --pid --fork --uts --kill-child -- bash -euo pipefail -c '
    root=$1; dir=$2; ccache_dir=$3; shift 3
    mount --make-rprivate /
    # The root a mount point of its own, as / is on a machine: a command inside that makes
    # its own mount namespace (the suite'"'"'s Slurm 24.11 stage runs this script again) needs it.
    mount --bind "$root" "$root"
    [ -z "$ccache_dir" ] || mount --bind "$ccache_dir" "$root/root/.cache/ccache"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
    mount -t tmpfs -o mode=755 tmpfs "$root/run"
    hostname attrib-fresh
    exec chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
      NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/bash -c "cd \"$dir\" && $*"
  ' in-debian "$@" &
  namespace=$!
  trap 'kill -KILL "$namespace" 2>/dev/null; wait "$namespace" 2>/dev/null; exit 130' INT TERM HUP
  wait "$namespace" || status=$?
  trap - INT TERM HUP
  return "$status"
}

# copy_root FROM TO: a working copy of a cached root, with what each run needs: the host's
# resolver and local CA (the network the root sees is the host's, for apt and npm alike),
# a host name that resolves (the installer writes one, debootstrap does not), and dpkg
# without an fsync per file: the copy is thrown away after the run, as a CI container is
# (Debian's own container images set the same), and a fresh machine's installation of
# some thousand packages otherwise waits on it. Never the host's dpkg.
copy_root() {
  local from=$1 to=$2
  chmod 755 "$to"
  cp -a "$from/." "$to/"
  rm -f "$to/.complete"
  echo force-unsafe-io >"$to/etc/dpkg/dpkg.cfg.d/attrib-throwaway-root"
  cp /etc/resolv.conf "$to/etc/resolv.conf"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$to/usr/local/share/ca-certificates/"
    chroot "$to" update-ca-certificates >/dev/null 2>&1 || true
  fi
  echo attrib-fresh >"$to/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\tattrib-fresh\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$to/etc/hosts"
}

# The cached root with the packages already in it (--with-deps), made once per version
# of install-deps.sh; a failed install leaves no cache behind.
if [ -n "$deps" ]; then
  with_deps=$cache.deps-$deps-$(sha256sum "$src/scripts/install-deps.sh" | cut -c1-16)
  if [ ! -e "$with_deps/.complete" ]; then
    echo "in-debian.sh: installing attrib's $deps packages into a copy of the $release root (once)"
    rm -rf "$cache".deps-"$deps"-* "$with_deps"
    mkdir -p "$with_deps"
    copy_root "$cache" "$with_deps"
    cp "$src/scripts/install-deps.sh" "$with_deps/root/attrib-install-deps.sh"
    enter_root "$with_deps" /root "" "ATTRIB_DEPS=$deps ./attrib-install-deps.sh && apt-get clean" ||
      { rm -rf "$with_deps"; echo "in-debian.sh: installing the $deps packages failed" >&2; exit 1; }
    rm -f "$with_deps/root/attrib-install-deps.sh"
    touch "$with_deps/.complete"
  fi
  cache=$with_deps
fi
[ "$prepare" = 0 ] || exit 0

root=$(mktemp -d "/var/tmp/attrib-$release-root.XXXXXX")
cleanup() {
  if [ "$keep" = 1 ]; then echo "in-debian.sh: root kept at $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
copy_root "$cache" "$root"
install -d -m 755 "$root$(dirname "$checkout_at")"
chmod 700 "$root/root"
source "$src/scripts/lib/checkout-files.sh"
checkout_tar "$src" | (mkdir -p "$root$checkout_at" && tar -C "$root$checkout_at" -xf -)
ccache_dir=${ATTRIB_ROOT_CCACHE:-}
[ -z "$ccache_dir" ] || mkdir -p "$ccache_dir" "$root/root/.cache/ccache"
enter_root "$root" "$checkout_at" "$ccache_dir" "$@"
