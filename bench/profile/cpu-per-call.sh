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
# `-p paid`: the default (paid) pipeline on Redis (REDIS_URL, default 127.0.0.1:6379) under a fresh prefix, one
# funded key (bench/profile/paid-key.ts), fixed pricing and limits far away as the bench's gw-redis-node target.
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
TICK=$(getconf CLK_TCK)
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
GW=
DATA=$(mktemp -d)
[ "$PIPE" != paid ] || paid_env
trap 'kill $UP ${GW:-} 2>/dev/null || true; rm -rf "$DATA"; drop_prefix' EXIT
cpu() { awk -v t="$TICK" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
for round in $(seq 1 "$ROUNDS"); do
  for dist in "$@"; do
    rm -rf "${DATA:?}"/*
    PIPELINE=$PIPE start_relay "$GW_PORT" "$UP_PORT" "$DATA" "$dist/core/main.js"
    relay_load "$GW_PORT"
    [ -z "${KEY:-}" ] || LOAD+=(-H "authorization=Bearer $KEY")
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
