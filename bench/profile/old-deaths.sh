#!/usr/bin/env bash
# What the gateway keeps for seconds and then drops, under a paced load: three heap snapshots of one process
# (SIGUSR2, `--heapsnapshot-signal`), the second GAP1 s after the first and the third GAP2 s after the second,
# read by bench/profile/heap-deaths.ts: the objects alive in the first two and gone from the third are what
# fills the old generation between two mark-compacts (docs/benchmarks.md, "What dies in the old generation").
#
#   bash bench/profile/old-deaths.sh [-s redis|sqlite|relay] [-R rate] [-1 gap1] [-2 gap2] [-w warm] <dist>
#
# Defaults: the paid pipeline on Redis with one funded key (as scavenges.sh -p paid), 1,000 req/s (autocannon -R
# over 64 connections), the first snapshot after 8 s of load, gaps of 2 and 15 s (fractions allowed). `-s sqlite`:
# the same on a fresh SQLite data directory; `-s relay`: PIPELINE=relay. Loopback only; the load is bounded by its
# duration.
# Snapshots are taken while the load runs (each pauses the process for a second or two).
set -euo pipefail
cd "$(dirname "$0")/../.."
STORE=redis RATE=1000 GAP1=2 GAP2=15 WARM=8
while getopts "s:R:1:2:w:" o; do
  case $o in
    s) STORE=$OPTARG ;; R) RATE=$OPTARG ;; 1) GAP1=$OPTARG ;; 2) GAP2=$OPTARG ;; w) WARM=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-s redis|sqlite|relay] [-R rate] [-1 gap1] [-2 gap2] [-w warm] <dist>" >&2; exit 2; }
UP_PORT=${UP_PORT:-19461}
GW_PORT=${GW_PORT:-19462}
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
GW= LOADPID=
SNAP=$(mktemp -d)
DATA=$(mktemp -d)
case $STORE in
  redis) PIPE=paid ;; sqlite) PIPE=paid-sqlite ;; relay) PIPE=relay ;;
  *) echo "unknown store $STORE" >&2; exit 2 ;;
esac
paid_mode "$PIPE"
trap 'kill $UP ${GW:-} ${LOADPID:-} 2>/dev/null || true; rm -rf "$SNAP" "$DATA"; drop_prefix' EXIT
PIPELINE=$PIPE start_relay "$GW_PORT" "$UP_PORT" "$DATA" --heapsnapshot-signal=SIGUSR2 --diagnostic-dir="$SNAP" \
  "$1/core/main.js"
relay_load "$GW_PORT"
[ -z "${KEY:-}" ] || LOAD+=(-H "authorization=Bearer $KEY")
node_modules/.bin/autocannon -d 2 "${LOAD[@]}" >/dev/null 2>&1
node_modules/.bin/autocannon -d "$(awk "BEGIN { printf \"%d\", $WARM + $GAP1 + $GAP2 + 21 }")" -R "$RATE" "${LOAD[@]}" >/dev/null 2>&1 &
LOADPID=$!

# One snapshot: the signal, then wait until the file is there and the process answers again (written).
snap() {
  local before
  before=$(find "$SNAP" -name '*.heapsnapshot' | wc -l)
  kill -USR2 "$GW"
  for _ in $(seq 1 600); do
    [ "$(find "$SNAP" -name '*.heapsnapshot' | wc -l)" -gt "$before" ] && break
    sleep 0.05
  done
  # A request that waited through the snapshot can be cut by the server's header timeout: ask again.
  for _ in $(seq 1 100); do curl -sf -m 60 "http://127.0.0.1:$GW_PORT/healthz" >/dev/null && return 0; sleep 0.2; done
  echo "the gateway did not answer after its snapshot" >&2
  return 1
}
sleep "$WARM"; snap
sleep "$GAP1"; snap
sleep "$GAP2"; snap
kill "$LOADPID" 2>/dev/null || true
mapfile -t FILES < <(find "$SNAP" -name '*.heapsnapshot' | sort)
echo "store $STORE, $RATE req/s, snapshots at ${WARM} s, +${GAP1} s, +${GAP2} s"
node --max-old-space-size=8192 --import tsx bench/profile/heap-deaths.ts "${FILES[@]}" "${TOP:-25}"
