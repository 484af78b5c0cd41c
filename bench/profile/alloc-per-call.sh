#!/usr/bin/env bash
# Bytes allocated per relayed call (everything the garbage collector has to work through), for a built tree:
# the relay-only gateway (PIPELINE=relay, node:http) under a fixed number of calls (autocannon -a, c=64) with
# the sampling heap profiler of bench/profile/alloc-preload.cjs, then the per-call bytes and top allocating
# functions. Unlike CPU time on this shared machine, allocated bytes per call barely move between runs, so
# a before/after of an allocation cut compares. Bounded: 2 s warm-up, then CALLS calls.
#   bash bench/profile/alloc-per-call.sh [-p paid|paid-sqlite] [-R rate] [dist] [calls]   (defaults: relay, ./dist, 20000)
# ALLOC_SURVIVORS=1: only what outlived the young generation (alloc-preload.cjs); with `-R 1000` what does at the
# paced rate of the tail targets (at c=64 a scavenge comes every ~50 ms and catches more of each call).
# `-p paid`: the default (paid) pipeline on Redis (REDIS_URL, default 127.0.0.1:6379) under a fresh prefix with one
# funded key, fixed pricing and limits far away, as cpu-per-call.sh's `-p paid`; `-p paid-sqlite`: the same on a
# fresh SQLite data directory. ALLOC_KEEP=<file>: keep the raw profile there.
set -euo pipefail
cd "$(dirname "$0")/../.."
PIPE=relay RATE=
while getopts "p:R:" o; do
  case $o in
    p) PIPE=$OPTARG ;; R) RATE=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
DIST=${1:-dist}
CALLS=${2:-20000}
UP_PORT=${UP_PORT:-19441}
GW_PORT=${GW_PORT:-19442}
OUT=$(mktemp -d)
DATA=$(mktemp -d)
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
paid_mode "$PIPE"
trap 'kill $UP ${GW:-} 2>/dev/null || true; rm -rf "$DATA" "$OUT"; drop_prefix' EXIT
PIPELINE=$PIPE ALLOC_OUT=$OUT/alloc.json start_relay "$GW_PORT" "$UP_PORT" "$DATA" -r ./bench/profile/alloc-preload.cjs "$DIST/core/main.js"
relay_load "$GW_PORT"
[ -z "${KEY:-}" ] || LOAD+=(-H "authorization=Bearer $KEY")
node_modules/.bin/autocannon -d 2 "${LOAD[@]}" >/dev/null 2>&1
kill -WINCH $GW
sleep 0.2
node_modules/.bin/autocannon -a "$CALLS" ${RATE:+-R "$RATE"} "${LOAD[@]}" 2>&1 | grep -E "requests in"
kill -WINCH $GW
for _ in $(seq 1 50); do [ -s "$OUT/alloc.json" ] && break; sleep 0.2; done
sleep 0.5
[ -z "${ALLOC_KEEP:-}" ] || cp "$OUT/alloc.json" "$ALLOC_KEEP"
npx tsx bench/profile/alloc-summary.ts "$OUT/alloc.json" "$CALLS" "${TOP:-15}"
