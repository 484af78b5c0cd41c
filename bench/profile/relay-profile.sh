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
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
trap 'kill $UP 2>/dev/null || true; rm -rf "$DATA"' EXIT
GW_LOG=$OUT/gateway.log start_relay "$GW_PORT" "$UP_PORT" "$DATA" --cpu-prof --cpu-prof-dir="$OUT" dist/core/main.js
relay_load "$GW_PORT"
node_modules/.bin/autocannon -d 3 "${LOAD[@]}" >/dev/null 2>&1
node_modules/.bin/autocannon -d 10 "${LOAD[@]}" 2>&1 | grep -E "Req/Sec|Latency|requests in"
kill -TERM $GW
wait $GW || true
PROFILE=$(ls "$OUT"/CPU.*.cpuprofile | head -1)
echo "profile: $PROFILE"
# The measured window: the process exits right after the 10 s load, so its last 10 s minus the shutdown.
npx tsx bench/profile/cpuprofile-summary.ts "$PROFILE" -10.5 -0.5 15
