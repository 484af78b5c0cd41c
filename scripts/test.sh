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
echo "== generated code drift"
npm run --silent gen:check
echo "== typecheck"
npm run --silent typecheck
echo "== lint"
npm run --silent lint
echo "== build"
# The suites' gateway processes run the build (scripts/lib/gateway-process.ts, GATEWAY_ENTRY), as `npm start`
# does: each starts on about a second of CPU less than the sources through tsx.
node scripts/build.mjs --if-changed
export GATEWAY_ENTRY=dist/core/main.js
echo "== tests"
npx vitest run "$@"
