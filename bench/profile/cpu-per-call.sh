#!/usr/bin/env bash
# Gateway CPU per call, A/B: runs each built tree (a `dist/` directory, e.g. this checkout's and one built in a
# worktree of the commit before a change) in alternating rounds under the same bounded autocannon load, and
# prints req/s and the gateway process's CPU (user + system, from /proc) per answered call for each round.
# Alternating matters: this 2-core machine drifts by ±25 % between runs, so only neighbouring rounds compare.
#
#   bash bench/profile/cpu-per-call.sh [-r rounds] [-d seconds] [-c connections] [-p pipeline] <dist> [<dist> ...]
#
# Defaults: 3 rounds, 8 s measured (after 2 s warm-up), c=64, PIPELINE=relay, node:http, non-stream chat with 8
# tokens against the mock upstream (bench/upstream/mock-upstream.ts). Loopback only; every run is bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=3 DUR=8 CONNS=64 PIPE=relay
while getopts "r:d:c:p:" o; do
  case $o in
    r) ROUNDS=$OPTARG ;; d) DUR=$OPTARG ;; c) CONNS=$OPTARG ;; p) PIPE=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-d seconds] [-c conns] [-p pipeline] <dist> [<dist> ...]" >&2; exit 2; }
UP_PORT=${UP_PORT:-19411}
GW_PORT=${GW_PORT:-19412}
BODY='{"model":"mock-gpt","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":8}'
TICK=$(getconf CLK_TCK)
node --import tsx bench/upstream/mock-upstream.ts --port "$UP_PORT" >/dev/null 2>&1 &
UP=$!
GW=
DATA=$(mktemp -d)
trap 'kill $UP ${GW:-} 2>/dev/null || true; rm -rf "$DATA"' EXIT
cpu() { awk -v t="$TICK" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
for round in $(seq 1 "$ROUNDS"); do
  for dist in "$@"; do
    rm -rf "${DATA:?}"/*
    PORT=$GW_PORT HOST=127.0.0.1 DATA_DIR=$DATA UPSTREAM_BASE_URL=http://127.0.0.1:$UP_PORT/v1 PIPELINE=$PIPE \
      BTC_USD_PRICE=60000 LOG_LEVEL=warn node "$dist/core/main.js" >/dev/null 2>&1 &
    GW=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$GW_PORT/healthz" >/dev/null && break; sleep 0.2; done
    LOAD=(-c "$CONNS" -m POST -H content-type=application/json -b "$BODY" "http://127.0.0.1:$GW_PORT/v1/chat/completions")
    node_modules/.bin/autocannon -d 2 "${LOAD[@]}" >/dev/null 2>&1
    c0=$(cpu $GW)
    out=$(node_modules/.bin/autocannon -j -d "$DUR" "${LOAD[@]}" 2>/dev/null)
    c1=$(cpu $GW)
    kill -TERM $GW; wait $GW 2>/dev/null || true; GW=
    node -e '
      const r = JSON.parse(process.argv[1]); const cpu = Number(process.argv[3]) - Number(process.argv[2]);
      const n = r["2xx"];
      console.log(`round ${process.argv[4]}  ${process.argv[5].padEnd(40)} ${(n / r.duration).toFixed(0).padStart(6)} req/s  ` +
        `non-2xx ${r.non2xx}  cpu/call ${((1000 * cpu) / n).toFixed(4)} ms`);
    ' "$out" "$c0" "$c1" "$round" "$dist"
  done
done
