#!/usr/bin/env bash
# CPU profile of the relay-only path (PIPELINE=relay, node:http, the built dist/) under a bounded autocannon
# load: 3 s warm-up then 10 s at c=64 against the mock upstream; prints the stage and top-frame tables for the
# measured window. Bounded on purpose (the machine may be shared).
#   bash bench/profile/relay-profile.sh [outDir]      (run `npm run build` first)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-$(mktemp -d -t relay-prof-XXXX)}
mkdir -p "$OUT"
UP_PORT=${UP_PORT:-19401}
GW_PORT=${GW_PORT:-19402}
DATA=$(mktemp -d)
BODY='{"model":"mock-gpt","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":8}'
node --import tsx bench/upstream/mock-upstream.ts --port "$UP_PORT" >"$OUT/upstream.log" 2>&1 &
UP=$!
PORT=$GW_PORT HOST=127.0.0.1 DATA_DIR=$DATA UPSTREAM_BASE_URL=http://127.0.0.1:$UP_PORT/v1 PIPELINE=relay \
  BTC_USD_PRICE=60000 LOG_LEVEL=warn node --cpu-prof --cpu-prof-dir="$OUT" dist/core/main.js >"$OUT/gateway.log" 2>&1 &
GW=$!
trap 'kill $UP 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$GW_PORT/healthz" >/dev/null && break; sleep 0.2; done
LOAD=(-c 64 -m POST -H content-type=application/json -b "$BODY" "http://127.0.0.1:$GW_PORT/v1/chat/completions")
node_modules/.bin/autocannon -d 3 "${LOAD[@]}" >/dev/null 2>&1
node_modules/.bin/autocannon -d 10 "${LOAD[@]}" 2>&1 | grep -E "Req/Sec|Latency|requests in"
kill -TERM $GW
wait $GW || true
PROFILE=$(ls "$OUT"/CPU.*.cpuprofile | head -1)
echo "profile: $PROFILE"
# The measured window: the process exits right after the 10 s load, so its last 10 s minus the shutdown.
npx tsx bench/profile/cpuprofile-summary.ts "$PROFILE" -10.5 -0.5 15
