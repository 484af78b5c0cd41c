#!/usr/bin/env bash
# The whole test suite: generated-code drift, typecheck, lint, then every vitest suite (unit, ledger
# conformance on SQLite / Redis / Redis Cluster, wallet against the dev mint, end-to-end with real clients).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== generated code drift"
npm run --silent gen:check
echo "== typecheck"
npm run --silent typecheck
echo "== lint"
npm run --silent lint
echo "== tests"
npx vitest run "$@"
