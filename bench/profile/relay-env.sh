# Sourced by the bench/profile scripts (from the repository root): the relay-only set-up they share.
#   start_upstream <port>                      the mock upstream in the background; sets UP
#   start_relay <port> <upPort> <dataDir> <node args…> -- <entry>
#                                              the gateway (PIPELINE, default relay; node:http) in the background,
#                                              waits for /healthz; sets GW
#   relay_load <port>                          sets LOAD: autocannon arguments for non-stream chat at c=64
#   paid_env                                   the paid pipeline on Redis (REDIS_URL, default 127.0.0.1:6379) under a
#                                              fresh prefix with one funded key (bench/profile/paid-key.ts), fixed
#                                              pricing and limits far away: exports the settings, sets KEY and PIPE
#   paid_sqlite_env                            the same paid pipeline on SQLite: a fresh data directory with one funded
#                                              key (paid-key.ts sqlite); sets PAID_DATA (the directory, the caller
#                                              removes it), KEY and PIPE, exports the settings
#   paid_mode <pipeline>                       for a script's `-p`: `paid` runs paid_env, `paid-sqlite` runs
#                                              paid_sqlite_env and makes its directory DATA (the old one removed);
#                                              any other PIPELINE value is left as it is
#   drop_prefix                                deletes that prefix's keys (for the scripts' exit trap)
BODY='{"model":"mock-gpt","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":8}'

start_upstream() {
  node --import tsx bench/upstream/mock-upstream.ts --port "$1" >/dev/null 2>&1 &
  UP=$!
}

start_relay() {
  local port=$1 up=$2 data=$3
  shift 3
  PORT=$port HOST=127.0.0.1 DATA_DIR=$data UPSTREAM_BASE_URL=http://127.0.0.1:$up/v1 PIPELINE=${PIPELINE:-relay} \
    BTC_USD_PRICE=60000 LOG_LEVEL=warn node "$@" >"${GW_LOG:-/dev/null}" 2>&1 &
  GW=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
}

relay_load() {
  LOAD=(-c "${CONNS:-64}" -m POST -H content-type=application/json -b "$BODY" "http://127.0.0.1:$1/v1/chat/completions")
}

paid_settings() {
  export FIXED_PRICING=true FIXED_COST_PER_REQUEST=1 RATE_LIMIT_REQUESTS_PER_MINUTE=1000000000 \
    RATE_LIMIT_TOKENS_PER_HOUR=1000000000000 RATE_LIMIT_CONCURRENT=1000000 NODE_ENV=production
  PIPE=auth,rate-limit,reserve,relay,owner,meter,settle,change-token
}

paid_env() {
  eval "$(node --import tsx bench/profile/paid-key.ts)"
  export REDIS_URL="$REDIS_URL" REDIS_PREFIX="$REDIS_PREFIX"
  paid_settings
}

paid_sqlite_env() {
  local DATA_DIR
  eval "$(node --import tsx bench/profile/paid-key.ts sqlite)"
  PAID_DATA=$DATA_DIR
  paid_settings
}

paid_mode() {
  case $1 in
    paid) paid_env ;;
    paid-sqlite)
      paid_sqlite_env
      rm -rf "$DATA"
      DATA=$PAID_DATA
      ;;
  esac
}

drop_prefix() {
  [ -n "${REDIS_PREFIX:-}" ] || return 0
  redis-cli -u "${REDIS_URL:-redis://127.0.0.1:6379}" --scan --pattern "${REDIS_PREFIX}*" |
    xargs -r -n 500 redis-cli -u "${REDIS_URL:-redis://127.0.0.1:6379}" unlink >/dev/null
}
