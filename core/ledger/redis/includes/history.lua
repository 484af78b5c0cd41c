--[[
  Transactions: newest first in a list per account. The list is trimmed only when it grew TRIM_SLACK past
  the retention (one LTRIM per TRIM_SLACK writes instead of one per write); readers never look past the
  retention (redis-reads.ts), so what they see is exactly the newest `retention`.
  Audit records: the account's stream of the audit log (core/audit/audit-log.ts), trimmed by age.
]]
--- @include "num"
local TRIM_SLACK = 100

local function pushTrim(listKey, rec, retention)
  if redis.call('LPUSH', listKey, rec) > retention + TRIM_SLACK then
    redis.call('LTRIM', listKey, 0, retention - 1)
  end
end

local function addTx(txKey, a, accountId, typ, amount, desc, now, kh, model, est, retention)
  a.txseq = a.txseq + 1
  local id = accountId .. '-' .. S(a.txseq)
  local rec = {id = id, t = typ, a = S(amount), b = S(a.balance), d = desc, ts = Sx(now), e = est}
  if kh then rec.k = string.sub(kh, 1, 16) end
  if model and model ~= '' then rec.m = model end
  pushTrim(txKey, cjson.encode(rec), retention)
  return id
end

-- A settled call's audit record, in the same step as its charge: `json` is the record without its cost (built
-- by core/audit), closed here with what was charged. The stream id is the write time; entries older than
-- `minId` (ms: now − retention) go (exact MINID: retention is by age).
local function addAudit(logKey, json, charge, minId)
  local rec = string.sub(json, 1, -2) .. ',"cost_msats":' .. S(charge) .. ',"cost_sats":' ..
    S(math.floor(charge / 1000)) .. '}'
  redis.call('XADD', logKey, 'MINID', minId, '*', 'r', rec)
end
