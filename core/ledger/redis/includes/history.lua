--[[
  Transactions and audit records: newest first in a list per account. The list is trimmed only when it
  grew TRIM_SLACK past the retention (one LTRIM per TRIM_SLACK writes instead of one per write); readers
  never look past the retention (redis-reads.ts), so what they see is exactly the newest `retention`.
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

local function addAudit(auditKey, a, kh, reqId, ip, endpoint, method, ua, status, cost, now, retention)
  a.auditseq = a.auditseq + 1
  local rec = {ts = Sx(now), k = string.sub(kh, 1, 16), q = reqId, p = endpoint, v = method,
    c = S(cost), st = status}
  if ip then rec.ip = ip end
  if ua ~= '' then rec.ua = ua end
  pushTrim(auditKey, cjson.encode(rec), retention)
end
