#!/usr/bin/env bash
# Bytes promoted per scavenge by ioredis round trips and objects, apart from a gateway (see
# bench/profile/pipeline-promotion.ts): one 12 s run per mode under --trace-gc-nvp, summarised by
# bench/profile/scavenge-summary.ts with the first 4 scavenges left out.
#
#   bash bench/profile/pipeline-promotion.sh [mode ...]     (default: every mode)
set -euo pipefail
cd "$(dirname "$0")/../.."
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(none plain auto pipeline pipeline-only object-accessor object-shared-getter)
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
for m in "${modes[@]}"; do
  timeout 60 node --import tsx --trace-gc-nvp bench/profile/pipeline-promotion.ts "$m" >"$LOG" 2>&1
  printf '%-21s %s\n' "$m" "$(npx tsx bench/profile/scavenge-summary.ts "$LOG" 0 4)"
done
