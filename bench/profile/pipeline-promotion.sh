#!/usr/bin/env bash
# Bytes promoted per scavenge by ioredis round trips and objects, apart from a gateway (see
# bench/profile/pipeline-promotion.ts): one 12 s run per mode under --trace-gc-nvp, the first 4 scavenges left out.
#
#   bash bench/profile/pipeline-promotion.sh [mode ...]     (default: every mode)
set -euo pipefail
cd "$(dirname "$0")/../.."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
for mode in "${@:-none plain auto pipeline pipeline-only object-accessor object-shared-getter}"; do
  for m in $mode; do
    timeout 60 node --import tsx --trace-gc-nvp bench/profile/pipeline-promotion.ts "$m" >"$LOG" 2>&1
    grep -a ' gc=s ' "$LOG" | tail -n +5 | awk -v m="$m" '{
      for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "promoted") p += kv[2]; if (kv[1] == "new_space_survived") s += kv[2] }
      n++
    } END { printf "%-14s %3d scavenges, promoted %6.1f KB, survived %6.1f KB per scavenge\n", m, n, p / n / 1024, s / n / 1024 }'
  done
done
