# What other users run, read or connect to must live where they can reach it, whatever
# the checkout's path: slurmctld runs the hook as SlurmUser, munged and the Slurm daemons
# run as their own users, and tests run attrib-show as an ordinary user. A checkout in
# root's home (mode 0700) is out of their reach, so the demo and the test suite stage the
# binaries those users execute into a runtime directory under /tmp and check, before
# anything starts, that each user can reach what it needs. Sourced by scripts/demo.sh
# and tests/e2e/stage-runtime.sh.

# attrib_runtime_dir BUILD_DIR: the runtime directory of a build tree, one per build tree
# so two checkouts never share one ($ATTRIB_RUNTIME_DIR overrides).
attrib_runtime_dir() {
  if [ -n "${ATTRIB_RUNTIME_DIR:-}" ]; then echo "$ATTRIB_RUNTIME_DIR"; return; fi
  echo "/tmp/attrib-run-$(printf '%s' "$(realpath -m "$1")" | sha1sum | cut -c1-10)"
}

# first_unreachable USER PATH: the first directory on PATH's way that USER cannot enter
# (or PATH itself), empty when USER reaches it.
first_unreachable() {
  local user=$1 path=$2 prefix="" part
  local IFS=/
  for part in $path; do
    [ -n "$part" ] || continue
    prefix+="/$part"
    if [ "$prefix" != "$path" ] && ! setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups test -x "$prefix"; then
      echo "$prefix"; return
    fi
  done
}

# require_reachable USER TEST PATH WHAT: USER must pass `test TEST PATH` (-r, -x, -w, -S);
# otherwise a message naming the user, the path and the directory in the way, and exit 1.
require_reachable() {
  local user=$1 check=$2 path=$3 what=$4 blocker
  if setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups test "$check" "$path" 2>/dev/null; then
    return 0
  fi
  blocker=$(first_unreachable "$user" "$path")
  {
    echo "preflight: user '$user' cannot reach $path ($what)."
    if [ -n "$blocker" ]; then
      echo "preflight: $blocker is mode $(stat -c %a "$blocker") (owner $(stat -c %U "$blocker")): '$user' may not enter it."
    else
      echo "preflight: $path is mode $(stat -c %a "$path" 2>/dev/null || echo '(missing)')."
    fi
    echo "preflight: keep what other users need outside such directories (the scripts stage it under /tmp;"
    echo "preflight: set ATTRIB_RUNTIME_DIR to another world-reachable directory if /tmp is not one)."
  } >&2
  exit 1
}

# stage_binaries BUILD_DIR DEST: copies the programs other users run (the hook, attrib-show, attrib-submit,
# the daemon) and the SPANK module into DEST, world-readable and -executable. Each is
# linked statically against attrib's own libraries, so the copy runs anywhere.
stage_binaries() {
  local build=$1 dest=$2 file
  install -d -m 755 "$dest"
  for file in epilog/attrib-epilog epilog/attrib-epilog-send tools/attrib-show tools/attrib-submit attributiond/attributiond \
    spank/spank_attrib.so; do
    [ -e "$build/$file" ] || continue
    install -m 755 "$build/$file" "$dest/$(basename "$file")"
  done
}

# preflight_runtime DIR [USER...]: before anything is built or started, DIR must be a place
# where slurm, munge and an ordinary user (nobody) -- or the USERs named -- can enter and
# run a program (not under a 0700 home, not on a noexec mount). Run as root; slurm and
# munge are made by their packages (scripts/install-deps.sh), nobody is always there.
preflight_runtime() {
  local dir=$1 user probe users=("${@:2}")
  [ ${#users[@]} -gt 0 ] || users=(slurm munge nobody)
  install -d -m 755 "$dir"
  probe=$dir/.preflight
  printf '#!/bin/sh\nexit 0\n' > "$probe"
  chmod 755 "$probe"
  for user in "${users[@]}"; do
    require_reachable "$user" -x "$probe" "the runtime directory other users run attrib's programs from"
    setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups "$probe" 2>/dev/null || {
      echo "preflight: user '$user' cannot run programs in $dir (is it on a noexec mount?);" \
           "set ATTRIB_RUNTIME_DIR to another directory" >&2
      exit 1
    }
  done
  rm -f "$probe"
}
