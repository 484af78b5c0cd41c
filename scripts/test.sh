#!/usr/bin/env bash
# The whole test suite: generated-code drift, typecheck, lint, then every vitest suite (unit, ledger
# conformance on SQLite / Redis / Redis Cluster, wallet against the dev mint, end-to-end with real clients).
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests drive Debian's chromium with playwright-core (a downloaded browser cannot install here);
# the Prometheus test starts Debian's prometheus. Install whichever is missing.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/bin/prometheus ] || missing+=(prometheus)
# The README walkthroughs (test/docs/readme-walkthroughs.test.ts) read JSON answers with jq, as the README does.
command -v jq >/dev/null 2>&1 || missing+=(jq)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing Debian ${missing[*]} for the browser, Prometheus and README tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
# The four checks before the suites are independent (each reads the sources; the build writes only dist/): they
# run side by side, each into its own log, printed in this order with what each took; any that failed stops the run
# after all four have printed. They are CPU-bound (the typecheck and the build use more than one core), so on 2
# cores the gain is small: 57 s side by side in a CI run against ≈ 63 s in a row on an idle machine.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
checks=(
  "generated code drift|npm run --silent gen:check"
  "typecheck|npm run --silent typecheck"
  "lint|npm run --silent lint"
  # The suites' gateway processes run the build (scripts/lib/gateway-process.ts, GATEWAY_ENTRY), as `npm start`
  # does: each starts on about a second of CPU less than the sources through tsx.
  "build|node scripts/build.mjs --if-changed"
)
pids=()
for i in "${!checks[@]}"; do
  (
    start=$(date +%s) rc=0
    bash -c "${checks[$i]#*|}" >"$logs/$i" 2>&1 || rc=$?
    echo "$rc $(($(date +%s) - start))" >"$logs/$i.rc"
  ) &
  pids+=($!)
done
wait "${pids[@]}"
failed=0
for i in "${!checks[@]}"; do
  read -r rc took <"$logs/$i.rc"
  echo "== ${checks[$i]%%|*} (${took} s)"
  cat "$logs/$i"
  if [ "$rc" != 0 ]; then echo "== ${checks[$i]%%|*} failed (exit $rc)"; failed=1; fi
done
[ "$failed" = 0 ] || exit 1
export GATEWAY_ENTRY=dist/core/main.js
echo "== tests"
npx vitest run "$@"

# Node 24 LTS (README, "Set-up"): the registry's `node` package brings it without the internet (`npx -y
# node@24`). A substantial slice runs on it, not the whole suite, to keep the run well under CI's limit
# (the whole suite took 18 min in CI on a 2-core machine, 2026-12-01): the ledger conformance on SQLite and Redis, paid
# calls end to end with the OpenAI and Anthropic SDKs (every endpoint, every payment mode, X-Cashu change),
# eCash received and spent against the dev mint, the audit readers, the health probes (they say node:http
# serves when HTTP_ENGINE=uws cannot load: no uWS build loads on Node 24 with glibc 2.36), the engine choice
# and the start-up version check. Skipped when arguments chose files (a partial run) or NODE24_SLICE=0.
NODE24_FILES=(
  test/node-version.test.ts
  test/http/transport-units.test.ts
  test/routes/health.test.ts
  test/routes/wallet.test.ts
  test/audit/audit-order.test.ts
  test/ledger/sqlite.test.ts
  test/ledger/redis.test.ts
  test/e2e/paid-endpoints.test.ts
  test/e2e/paid-modes.test.ts
  test/e2e/messages.test.ts
  test/e2e/x-cashu-change.test.ts
  test/wallet/receive-sqlite.test.ts
  test/wallet/receive-redis.test.ts
  test/wallet/node20-cashu-ts.test.ts
)
if [ "$#" -eq 0 ] && [ "${NODE24_SLICE:-1}" != 0 ]; then
  node24="$(npx -y node@24 -p process.execPath)"
  echo "== tests on Node $("$node24" --version) (a slice: ${#NODE24_FILES[@]} files)"
  # Its directory first on PATH: the gateway and mint processes the suites start run on Node 24 too.
  PATH="$(dirname "$node24"):$PATH" "$node24" node_modules/vitest/vitest.mjs run "${NODE24_FILES[@]}"
fi
