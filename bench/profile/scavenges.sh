#!/usr/bin/env bash
# The gateway's scavenges under a fixed rate, A/B: runs each built tree (a `dist/` directory) in alternating rounds
# with `--trace-gc-nvp` under the same bounded autocannon load and prints, per round, the scavenges of the measured
# window (count, pause mean and max, how many passed 5 ms) and what each copied: the bytes that survived it and
# those it promoted, and the bytes allocated between two of them (bench/profile/scavenge-summary.ts). A scavenge's
# pause grows with what it copies, and at a fixed rate the pauses are what the p99 meets
# (docs/benchmarks.md, "What the paid gateway's scavenges copy").
#
#   bash bench/profile/scavenges.sh [-r rounds] [-d seconds] [-R rate] [-p pipeline] <dist> [<dist> ...]
#
# Defaults: 2 rounds, 10 s measured (after 2 s at c=64 to warm up), 1,000 req/s (autocannon -R over 64
# connections), PIPELINE=relay, node:http, non-stream chat with 8 tokens against the mock upstream. `-p paid`: the
# default (paid) pipeline on Redis with one funded key, as cpu-per-call.sh's `-p paid`; `-p paid-sqlite`: the same
# on SQLite (a fresh data directory with one funded key each round). Loopback only; bounded.
# SCAVENGE_NODE_ARGS: more node flags for the gateway (e.g. --max-semi-space-size=8).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=2 DUR=10 RATE=1000 PIPE=relay
while getopts "r:d:R:p:" o; do
  case $o in
    r) ROUNDS=$OPTARG ;; d) DUR=$OPTARG ;; R) RATE=$OPTARG ;; p) PIPE=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-d seconds] [-R rate] [-p pipeline] <dist> [<dist> ...]" >&2; exit 2; }
UP_PORT=${UP_PORT:-19451}
GW_PORT=${GW_PORT:-19452}
. bench/profile/relay-env.sh
start_upstream "$UP_PORT"
GW=
DATA=$(mktemp -d)
LOGS=$(mktemp -d)
MODE=$PIPE
[ "$MODE" != paid ] || paid_env
trap 'kill $UP ${GW:-} 2>/dev/null || true; rm -rf "$DATA" "$LOGS" "${PAID_DATA:-}"; drop_prefix' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for dist in "$@"; do
    rm -rf "${DATA:?}"/*
    data=$DATA
    if [ "$MODE" = paid-sqlite ]; then
      rm -rf "${PAID_DATA:-}"
      paid_sqlite_env
      data=$PAID_DATA
    fi
    # shellcheck disable=SC2086 # SCAVENGE_NODE_ARGS is a list of flags
    PIPELINE=$PIPE GW_LOG=$LOGS/gw.log start_relay "$GW_PORT" "$UP_PORT" "$data" --trace-gc-nvp ${SCAVENGE_NODE_ARGS:-} \
      "$dist/core/main.js"
    relay_load "$GW_PORT"
    [ -z "${KEY:-}" ] || LOAD+=(-H "authorization=Bearer $KEY")
    node_modules/.bin/autocannon -d 2 "${LOAD[@]}" >/dev/null 2>&1
    from=$(grep -ac ' gc=s ' "$LOGS/gw.log" || true)
    out=$(node_modules/.bin/autocannon -j -d "$DUR" -R "$RATE" "${LOAD[@]}" 2>/dev/null)
    kill -TERM $GW; wait $GW 2>/dev/null || true; GW=
    calls=$(node -e 'const r = JSON.parse(process.argv[1]); console.log(r["2xx"])' "$out")
    echo "round $round  $dist  $calls calls: $(npx tsx bench/profile/scavenge-summary.ts "$LOGS/gw.log" "$calls" "$from")"
  done
done
