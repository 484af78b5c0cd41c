--[[
  Transactions: newest first in a list per account. The list is trimmed only when it grew TRIM_SLACK past
  the retention (one LTRIM per TRIM_SLACK writes instead of one per write); readers never look past the
  retention (redis-reads.ts), so what they see is exactly the newest `retention`.
  Audit records: the account's stream of the audit log (core/audit/audit-log.ts), trimmed by age.
  A step that writes many (the lease step: one transaction and one audit record per reported call) builds them
  with txRecord/auditRecord and writes each kind at once (pushTrimMany, addAudits): one LPUSH and one XTRIM a
  step instead of one LPUSH and one trimming XADD a call, with the same list and stream afterwards.
]]
--- @include "num"
local TRIM_SLACK = 100

-- The list just grew to `len`: trimmed back to the retention once it is TRIM_SLACK past it.
local function trimToRetention(listKey, len, retention)
  if len > retention + TRIM_SLACK then
    redis.call('LTRIM', listKey, 0, retention - 1)
  end
end

local function pushTrim(listKey, rec, retention)
  trimToRetention(listKey, redis.call('LPUSH', listKey, rec), retention)
end

-- `recs` newest last, as if pushed one by one; LPUSH takes them in slices (Lua's stack bounds unpack's count).
local function pushTrimMany(listKey, recs, retention)
  local n = #recs
  if n == 0 then return end
  local len = 0
  for i = 1, n, 1000 do
    len = redis.call('LPUSH', listKey, unpack(recs, i, math.min(i + 999, n)))
  end
  trimToRetention(listKey, len, retention)
end

-- The next transaction of account `a` (its txseq advanced; `a.balance` is the balance after it): id and JSON.
local function txRecord(a, accountId, typ, amount, desc, now, kh, model, est)
  a.txseq = a.txseq + 1
  local id = accountId .. '-' .. S(a.txseq)
  local rec = {id = id, t = typ, a = S(amount), b = S(a.balance), d = desc, ts = Sx(now), e = est}
  if kh then rec.k = string.sub(kh, 1, 16) end
  if model and model ~= '' then rec.m = model end
  return id, cjson.encode(rec)
end

local function addTx(txKey, a, accountId, typ, amount, desc, now, kh, model, est, retention)
  local id, rec = txRecord(a, accountId, typ, amount, desc, now, kh, model, est)
  pushTrim(txKey, rec, retention)
  return id
end

-- A settled call's audit record, in the same step as its charge: `json` is the record without its cost (built
-- by core/audit), closed here with what was charged. The stream id is the write time; entries older than
-- `minId` (ms: now − retention) go (exact MINID: retention is by age).
local function auditRecord(json, charge)
  return string.sub(json, 1, -2) .. ',"cost_msats":' .. S(charge) .. ',"cost_sats":' ..
    S(math.floor(charge / 1000)) .. '}'
end

local function addAudit(logKey, json, charge, minId)
  redis.call('XADD', logKey, 'MINID', minId, '*', 'r', auditRecord(json, charge))
end

-- Records made with auditRecord, in order; one exact trim after them (the entries just added are newer than
-- `minId`, so the stream ends as it would with a trimming XADD each).
local function addAudits(logKey, recs, minId)
  if #recs == 0 then return end
  for i = 1, #recs do redis.call('XADD', logKey, '*', 'r', recs[i]) end
  redis.call('XTRIM', logKey, 'MINID', minId)
end
