#!/usr/bin/env bash
# journal-inject.sh — put real journal entries into a journal directory.
#
# The demo and the tests need journald data without a running journald (the test
# machines have no systemd as PID 1). This writes Journal Export Format and converts
# it with systemd-journal-remote, so the result is a genuine journal file that the
# real libsystemd reads, trusted "_" fields included.
#
# Every call writes ONE new file, <dir>/<host>-<unique>.journal: sd-journal seeks
# badly in files whose entries are not in time order, so never append to old files.
#
# Usage:
#   journal-inject.sh --dir D --host n2 [--transport kernel|stdout|syslog]
#                     [--identifier python3] [--uid 0] [--priority 6]
#                     [--time-us <epoch µs>|now] [--boot-id <32 hex>]
#                     [--field KEY=VALUE]... -- "MESSAGE" ["MESSAGE"...]
#
#   --transport   _TRANSPORT of the entries (default kernel)
#   --identifier  SYSLOG_IDENTIFIER (default "kernel" for the kernel transport;
#                 required for stdout and syslog)
#   --uid         _UID (default 0)
#   --priority    PRIORITY, 0..7 (default 6 = info)
#   --time-us     __REALTIME_TIMESTAMP of the first message; later messages of the
#                 same call are 1 µs apart (default now)
#   --boot-id     _BOOT_ID (default: derived from the host name, so all calls for one
#                 host look like one boot; pass another id to simulate a reboot)
#   --field       an extra field, e.g. --field _PID=4242 (repeatable)
#
# __MONOTONIC_TIMESTAMP is set equal to the realtime timestamp (as if the boot began
# at the epoch): sd-journal orders entries of one boot by the monotonic clock, so the
# two clocks must agree across files of the same boot.
#
# Prints the path of the journal file it wrote. Needs only bash, coreutils and
# Debian's systemd-journal-remote package.
set -euo pipefail
export LC_ALL=C   # ${#var} must count bytes, not characters

JOURNAL_REMOTE=${JOURNAL_REMOTE:-/lib/systemd/systemd-journal-remote}

die() { echo "journal-inject.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

dir="" host="" transport="kernel" identifier="" uid="0" priority="6"
time_us="now" boot_id=""
extra_fields=()
while (($#)); do
  case "$1" in
    --dir) dir=${2-}; shift 2 ;;
    --host) host=${2-}; shift 2 ;;
    --transport) transport=${2-}; shift 2 ;;
    --identifier) identifier=${2-}; shift 2 ;;
    --uid) uid=${2-}; shift 2 ;;
    --priority) priority=${2-}; shift 2 ;;
    --time-us) time_us=${2-}; shift 2 ;;
    --boot-id) boot_id=${2-}; shift 2 ;;
    --field) extra_fields+=("${2-}"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ -n "$dir" ]] || die "--dir is required"
[[ "$host" =~ ^[A-Za-z0-9._-]+$ ]] || die "--host must be a host name, got '$host'"
case "$transport" in
  kernel) identifier=${identifier:-kernel} ;;
  stdout|syslog) [[ -n "$identifier" ]] || die "--identifier is required for --transport $transport" ;;
  *) die "--transport must be kernel, stdout or syslog, got '$transport'" ;;
esac
[[ "$identifier" != *$'\n'* ]] || die "--identifier must be one line"
[[ "$uid" =~ ^[0-9]+$ ]] || die "--uid must be a number, got '$uid'"
[[ "$priority" =~ ^[0-7]$ ]] || die "--priority must be 0..7, got '$priority'"
if [[ "$time_us" == now ]]; then
  time_us=$(date +%s%6N)
fi
[[ "$time_us" =~ ^[0-9]+$ ]] || die "--time-us must be epoch microseconds or 'now', got '$time_us'"
if [[ -z "$boot_id" ]]; then
  boot_id=$(printf 'attrib-journal-inject boot of %s' "$host" | md5sum | cut -c1-32)
fi
[[ "$boot_id" =~ ^[0-9a-f]{32}$ ]] || die "--boot-id must be 32 lowercase hex digits, got '$boot_id'"
for field in ${extra_fields[@]+"${extra_fields[@]}"}; do
  [[ "$field" =~ ^[A-Z0-9_]+=[^$'\n']*$ ]] || die "--field must be KEY=VALUE (upper-case key, one line), got '$field'"
done
(($# >= 1)) || die "no messages given (put them after --)"
[[ -x "$JOURNAL_REMOTE" ]] || die "$JOURNAL_REMOTE not found (install systemd-journal-remote)"

# Writes one field. Values containing a newline need the binary form of the export
# format: the name, a newline, the length as 64-bit little endian, the bytes, a newline.
emit_field() {
  local name=$1 value=$2
  if [[ "$value" == *$'\n'* ]]; then
    local length=${#value} i escaped=""
    for ((i = 0; i < 8; i++)); do
      escaped+=$(printf '\\x%02x' $(((length >> (8 * i)) & 255)))
    done
    printf '%s\n' "$name"
    printf "$escaped"
    printf '%s\n' "$value"
  else
    printf '%s=%s\n' "$name" "$value"
  fi
}

write_export() {
  local t=$time_us message field
  for message in "$@"; do
    emit_field __REALTIME_TIMESTAMP "$t"
    emit_field __MONOTONIC_TIMESTAMP "$t"
    emit_field _BOOT_ID "$boot_id"
    emit_field _HOSTNAME "$host"
    emit_field _TRANSPORT "$transport"
    emit_field SYSLOG_IDENTIFIER "$identifier"
    emit_field _UID "$uid"
    emit_field PRIORITY "$priority"
    for field in ${extra_fields[@]+"${extra_fields[@]}"}; do
      emit_field "${field%%=*}" "${field#*=}"
    done
    emit_field MESSAGE "$message"
    printf '\n'
    t=$((t + 1))
  done
}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)   # systemd-journal-remote wants an absolute --output
output="$dir/$host-$(date +%s%N)-$$-$RANDOM.journal"
[[ ! -e "$output" ]] || die "output $output already exists"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! write_export "$@" | "$JOURNAL_REMOTE" --output="$output" - 2>"$log"; then
  cat "$log" >&2
  die "systemd-journal-remote failed writing $output"
fi
echo "$output"
