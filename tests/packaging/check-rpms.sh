#!/usr/bin/env bash
# Checks the RPMs in DIR (scripts/build-rpms.sh): which packages exist, what each one
# installs where (rpm -qlp), which files are configuration kept on upgrade, and what
# each one depends on (rpm -qRp). Fails with the first difference.
set -euo pipefail
dir=$1
fail() { echo "check-rpms: FAIL: $*" >&2; exit 1; }
rpm_of() {
  local f
  f=$(find "$dir" -name "attrib-$1-[0-9]*.rpm" | head -n1)
  [ -n "$f" ] || fail "no attrib-$1 package in $dir"
  echo "$f"
}
# rpmbuild adds /usr/lib/.build-id links to every ELF file (for debuginfo lookup): they
# are rpm's, not part of our install() layout, so the file lists leave them out.
files() { rpm -qlp "$(rpm_of "$1")" | grep -v '^/usr/lib/\.build-id' | sort; }
flags() { rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILEUSERNAME} %{FILEMODES:perms} %{FILENAMES}\n]' "$(rpm_of "$1")"; }
requires() { rpm -qRp "$(rpm_of "$1")"; }
has_line() { grep -qxF -- "$2" <<<"$1" || fail "$3: no line '$2' in:"$'\n'"$1"; }
lacks() { ! grep -q -- "$2" <<<"$1" || fail "$3: unexpected '$2' in:"$'\n'"$1"; }

count=$(find "$dir" -name 'attrib-*.rpm' | wc -l)
[ "$count" = 4 ] || fail "expected 4 packages (spank epilog daemon tools), found $count"

# The SPANK plugin must match Slurm's major release: the Release says which one.
major=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x//p' /usr/include/slurm/slurm_version.h)
slurm=$(printf '%d.%02d' "0x${major:0:2}" "0x${major:2:2}")
release=$(rpm -qp --qf '%{RELEASE}' "$(rpm_of spank)")
[[ "$release" == 1.slurm$slurm* ]] || fail "spank Release '$release' does not name Slurm $slurm"

spank=$(files spank)
[ "$spank" = "$(printf '%s\n' /usr/lib64/slurm/spank_attrib.so /etc/slurm/plugstack.conf.d/attrib.conf /var/spool/attrib/tasks \
  /usr/lib/tmpfiles.d/attrib-spank.conf | sort)" ] ||
  fail "attrib-spank files:"$'\n'"$spank"
has_line "$(flags spank)" "cn root -rw-r--r-- /etc/slurm/plugstack.conf.d/attrib.conf" "plugstack snippet is %config(noreplace)"
spank_requires=$(requires spank)
has_line "$spank_requires" "(slurm >= $slurm with slurm < $slurm.99)" "spank requires its Slurm release"
lacks "$spank_requires" "libgrpc" "the plugin has no gRPC"
lacks "$spank_requires" "libslurm" "the plugin gets slurm symbols from its host process"

[ "$(files epilog)" = "$(printf '%s\n' /usr/libexec/attrib/attrib-epilog /usr/libexec/attrib/attrib-epilog-send \
  /var/spool/attrib /usr/lib/tmpfiles.d/attrib-epilog.conf | sort)" ] ||
  fail "attrib-epilog files:"$'\n'"$(files epilog)"
has_line "$(flags epilog)" " slurm drwxr-x--- /var/spool/attrib" "the hook's spool belongs to SlurmUser"
# attrib-epilog is static; attrib-epilog-send (epilog.delivery rpc) speaks gRPC.
grep -q "libgrpc++" <<<"$(requires epilog)" || fail "attrib-epilog-send does not require libgrpc++"

daemon=$(files daemon)
for f in /usr/bin/attributiond /etc/attrib/attrib.yaml /var/lib/attrib \
         /usr/share/attrib/rules/pack.yaml /usr/share/attrib/rules/data/xid-catalog.tsv \
         /usr/lib/systemd/system/attributiond-head.service /usr/lib/systemd/system/attributiond-node.service; do
  has_line "$daemon" "$f" "attrib-daemon"
done
lacks "$daemon" "/usr/bin/attrib-show" "tools are their own package"
has_line "$(flags daemon)" "cn root -rw-r--r-- /etc/attrib/attrib.yaml" "default config is %config(noreplace)"
has_line "$(flags daemon)" " slurm drwxr-x--- /var/lib/attrib" "the archive belongs to SlurmUser"
daemon_requires=$(requires daemon)
for lib in libsystemd.so.0 libsqlite3.so.0 libslurm; do
  grep -q "$lib" <<<"$daemon_requires" || fail "attrib-daemon does not require $lib"
done

[ "$(files tools)" = "$(printf '%s\n' /usr/bin/attrib-doctor /usr/bin/attrib-reattribute /usr/bin/attrib-replay /usr/bin/attrib-rules /usr/bin/attrib-show /usr/bin/attrib-submit | sort)" ] ||
  fail "attrib-tools files:"$'\n'"$(files tools)"
has_line "$(requires tools)" "attrib-daemon = $(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$(rpm_of daemon)")" "tools need the daemon's config and pack"
# Shipped binaries carry no test-only crash point (core/failpoint.h): neither the variable
# that arms one nor the message it dies with, in any packaged file.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
for package in spank epilog daemon tools; do
  (cd "$unpacked" && rpm2cpio "$(rpm_of "$package")" | cpio -idm --quiet)
done
armed=$(grep -rlaF -e ATTRIB_FAILPOINT -e ': SIGKILL' "$unpacked" | sed "s,^$unpacked,," || true)
[ -z "$armed" ] || fail "test-only failpoint code in packaged files:"$'\n'"$armed"
echo "check-rpms: 4 packages OK"
