#!/usr/bin/env bash
# Bytes allocated per relayed call (everything the garbage collector has to work through), for a built tree:
# the relay-only gateway (PIPELINE=relay, node:http) under a fixed number of calls (autocannon -a, c=64) with
# the sampling heap profiler of bench/profile/alloc-preload.cjs, then the per-call bytes and top allocating
# functions. Unlike CPU time on this shared machine, allocated bytes per call barely move between runs, so
# a before/after of an allocation cut compares. Bounded: 2 s warm-up, then CALLS calls.
#   bash bench/profile/alloc-per-call.sh [dist] [calls]      (defaults: ./dist, 20000)
set -euo pipefail
cd "$(dirname "$0")/../.."
DIST=${1:-dist}
CALLS=${2:-20000}
UP_PORT=${UP_PORT:-19441}
GW_PORT=${GW_PORT:-19442}
OUT=$(mktemp -d)
DATA=$(mktemp -d)
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
trap 'kill $UP ${GW:-} 2>/dev/null || true; rm -rf "$DATA" "$OUT"' EXIT
ALLOC_OUT=$OUT/alloc.json start_relay "$GW_PORT" "$UP_PORT" "$DATA" -r ./bench/profile/alloc-preload.cjs "$DIST/core/main.js"
relay_load "$GW_PORT"
node_modules/.bin/autocannon -d 2 "${LOAD[@]}" >/dev/null 2>&1
kill -WINCH $GW
sleep 0.2
node_modules/.bin/autocannon -a "$CALLS" "${LOAD[@]}" 2>&1 | grep -E "requests in"
kill -WINCH $GW
for _ in $(seq 1 50); do [ -s "$OUT/alloc.json" ] && break; sleep 0.2; done
sleep 0.5
npx tsx bench/profile/alloc-summary.ts "$OUT/alloc.json" "$CALLS" "${TOP:-15}"
