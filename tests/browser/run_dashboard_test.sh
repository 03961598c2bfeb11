#!/usr/bin/env bash
# The dashboard in real headless Chromium, end to end: a known archive (real verdicts from
# golden fixtures, written by the real JobStore), the real attributiond (head role) serving
# it on a free loopback port under MUNGE authentication with a private munged, a login link
# from the real `attrib-show --dashboard`, then dashboard.test.mjs drives Debian's chromium
# through playwright-core. The screenshots are left in WORK/artifacts/.
# Exit 77 (skipped) without root or munged: the login needs a munged of our own.
set -euo pipefail

while [ $# -gt 0 ]; do
  case "$1" in
    --attributiond) attributiond=$2; shift 2 ;;
    --attrib-show) attrib_show=$2; shift 2 ;;
    --fixture) fixture=$2; shift 2 ;;
    --source) source_dir=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/munged ]; then
  echo "SKIP: needs root and munged (a private munged for the login)"; exit 77
fi
for tool in /usr/bin/chromium node npm; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
done

# playwright-core exactly as locked; the browser is Debian's, never downloaded.
mkdir -p "$work/artifacts"
cp "$here/package.json" "$here/package-lock.json" "$work/"
if ! cmp -s "$here/package-lock.json" "$work/node_modules/.package-lock.json.installed" 2>/dev/null; then
  (cd "$work" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$work/node_modules/.package-lock.json.installed"
fi

run=$(mktemp -d /tmp/attrib-browser.XXXXXX)
chmod 755 "$run"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run"
}
trap cleanup EXIT

# A private munged: its own key and socket.
head -c 1024 /dev/urandom > "$run/munge.key"
chmod 400 "$run/munge.key"
/usr/sbin/munged --foreground --key-file="$run/munge.key" --socket="$run/munge.sock" \
  --pid-file="$run/munged.pid" --log-file="$run/munged.log" --seed-file="$run/munged.seed" \
  >"$run/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$run/munge.sock" ] && break; sleep 0.05; done
[ -S "$run/munge.sock" ] || { cat "$run/munged.out" >&2; echo "munged did not start" >&2; exit 1; }

"$fixture" "$run/attrib.db" "$source_dir/tests/fixtures" "$source_dir/rules/pack"

slurm_user=slurm
getent passwd slurm >/dev/null || slurm_user=daemon
cat > "$run/attrib.yaml" <<YAML
cluster: lab
head:
  listen: ["unix://$run/head.sock"]
  database: $run/attrib.db
  spool_dir: $run/spool
  dashboard_listen: "127.0.0.1:0"
auth:
  mode: munge
  munge_socket: $run/munge.sock
  slurm_user: $slurm_user
rules:
  pack_dir: $source_dir/rules/pack
YAML
"$attributiond" --role head -c "$run/attrib.yaml" >"$run/attributiond.log" 2>&1 &
pids+=($!)
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*dashboard on http:.* (port \([0-9]*\)).*/\1/p' "$run/attributiond.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "${pids[-1]}" 2>/dev/null || break
  sleep 0.05
done
[ -n "$port" ] || { cat "$run/attributiond.log" >&2; echo "attributiond did not start its dashboard" >&2; exit 1; }

# The login link, as a user gets it; then the browser.
login=$("$attrib_show" --dashboard -c "$run/attrib.yaml" --dashboard-url "http://127.0.0.1:$port")
status=0
NODE_PATH="$work/node_modules" node "$here/dashboard.test.mjs" "$login" "http://127.0.0.1:$port" \
  "$work/artifacts" "$run/chromium-profile" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- attributiond log" >&2
  cat "$run/attributiond.log" >&2
fi
exit "$status"
