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
# Example, the README's two commands with the checkout in root's home:
#   scripts/in-debian.sh -- 'scripts/demo.sh && scripts/test.sh'
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
release=bookworm
checkout_at=/root/src/attrib
keep=0
prepare=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release=$2; shift 2 ;;
    --checkout-at) checkout_at=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --prepare) prepare=1; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--release R] [--checkout-at PATH] [--keep] -- COMMAND..." >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || [ "$prepare" = 1 ] || { echo "in-debian.sh: no command" >&2; exit 2; }
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
[ "$prepare" = 0 ] || exit 0

root=$(mktemp -d "/var/tmp/attrib-$release-root.XXXXXX")
cleanup() {
  if [ "$keep" = 1 ]; then echo "in-debian.sh: root kept at $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
chmod 755 "$root"
cp -a "$cache/." "$root/"
rm -f "$root/.complete"
# The copy is thrown away after the run, as a CI container is: dpkg need not fsync each
# file it unpacks (Debian's own container images set the same), which a fresh machine's
# installation of some thousand packages otherwise waits on. Never the host's dpkg.
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/attrib-throwaway-root"
install -d -m 755 "$root$(dirname "$checkout_at")"
chmod 700 "$root/root"
source "$src/scripts/lib/checkout-files.sh"
checkout_tar "$src" | (mkdir -p "$root$checkout_at" && tar -C "$root$checkout_at" -xf -)
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The network the root sees is the host's: its resolver and, where the host trusts a
# local CA (a proxy's), that CA too, for apt and npm alike.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
fi
# What the installer writes and debootstrap does not: a host name that resolves.
echo attrib-fresh >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tattrib-fresh\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"

# The namespaces end with this script: --kill-child takes every process along, and the
# mounts below exist only inside the private mount namespace. unshare ignores SIGTERM
# while it waits, so a stop of this script is passed on as SIGKILL.
ccache_dir=${ATTRIB_ROOT_CCACHE:-}
[ -z "$ccache_dir" ] || mkdir -p "$ccache_dir" "$root/root/.cache/ccache"
status=0
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
' in-debian "$root" "$checkout_at" "$ccache_dir" "$@" &
namespace=$!
trap 'kill -KILL "$namespace" 2>/dev/null; wait "$namespace" 2>/dev/null; exit 130' INT TERM HUP
wait "$namespace" || status=$?
exit "$status"
