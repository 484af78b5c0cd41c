--[[
  Shared helpers, inlined into every script by `--- @include "common"` at load time (redis-scripts.ts).
  Integers are written with %.0f: Lua numbers are doubles, and the default number→string conversion
  (%.14g) would round amounts above 1e14 msat. Numbers inside JSON records are strings for the same reason.
]]
local function N(v)
  if not v then return 0 end
  return tonumber(v) or 0
end

local function S(n)
  return string.format('%.0f', n)
end

local ACCT_FIELDS = {'balance', 'reserved', 'deposited', 'spent', 'withdrawn', 'fees', 'requests',
  'created', 'deleted', 'txseq', 'auditseq'}

-- nil when the account does not exist ('created' is set once at creation).
local function loadAcct(key)
  local v = redis.call('HMGET', key, unpack(ACCT_FIELDS))
  if not v[8] then return nil end
  local a = {}
  for i, f in ipairs(ACCT_FIELDS) do a[f] = N(v[i]) end
  return a
end

local function newAcct(now)
  return {balance = 0, reserved = 0, deposited = 0, spent = 0, withdrawn = 0, fees = 0, requests = 0,
    created = now, deleted = 0, txseq = 0, auditseq = 0}
end

local function saveAcct(key, a)
  local args = {}
  for _, f in ipairs(ACCT_FIELDS) do
    args[#args + 1] = f
    args[#args + 1] = S(a[f])
  end
  redis.call('HSET', key, unpack(args))
end

-- Per-key usage counters live in one hash per account, fields '<keyHash>:<name>'.
local KST = {'r', 'o', 'pi', 'ps', 'ts', 'tr', 'lu', 'rw', 'rc', 'tw', 'tc'}

-- nil when the key is unknown. k.meta is the decoded metadata, k.raw the stored JSON.
local function loadKey(keysKey, kstKey, kh)
  local raw = redis.call('HGET', keysKey, kh)
  if not raw then return nil end
  local fields = {}
  for i, f in ipairs(KST) do fields[i] = kh .. ':' .. f end
  local v = redis.call('HMGET', kstKey, unpack(fields))
  local k = {hash = kh, meta = cjson.decode(raw), raw = raw}
  for i, f in ipairs(KST) do k[f] = N(v[i]) end
  return k
end

local function saveKst(kstKey, k)
  local args = {}
  for _, f in ipairs(KST) do
    args[#args + 1] = k.hash .. ':' .. f
    args[#args + 1] = S(k[f])
  end
  redis.call('HSET', kstKey, unpack(args))
end

local function expiredAt(m, now)
  local at = nil
  if m.exp and tonumber(m.exp) <= now then at = tonumber(m.exp) end
  if m.vd and tonumber(m.vd) <= now then
    if at == nil or tonumber(m.vd) < at then at = tonumber(m.vd) end
  end
  return at
end

local function modelAllowed(m, model)
  if type(m.models) ~= 'table' or #m.models == 0 then return true end
  for _, x in ipairs(m.models) do
    if x == model then return true end
  end
  return false
end

-- What a child may still take beyond its own open reservations; rolls its limit period first.
local function keyFree(k, periods)
  local m = k.meta
  if m.child ~= '1' or not m.lim then return 9007199254740991 end
  if m.lr then
    local pid = periods[m.lr]
    if k.pi ~= pid then
      k.pi = pid
      k.ps = 0
    end
  end
  local f = tonumber(m.lim) - k.ps - k.r
  if f < 0 then f = 0 end
  return f
end

local function addTx(txKey, a, accountId, typ, amount, desc, now, kh, model, est, retention)
  a.txseq = a.txseq + 1
  local id = accountId .. '-' .. S(a.txseq)
  local rec = {id = id, t = typ, a = S(amount), b = S(a.balance), d = desc, ts = S(now), e = est}
  if kh then rec.k = string.sub(kh, 1, 16) end
  if model and model ~= '' then rec.m = model end
  redis.call('LPUSH', txKey, cjson.encode(rec))
  redis.call('LTRIM', txKey, 0, retention - 1)
  return id
end

local function addAudit(auditKey, a, kh, reqId, ip, endpoint, method, ua, status, cost, now, retention)
  a.auditseq = a.auditseq + 1
  local rec = {ts = S(now), k = string.sub(kh, 1, 16), q = reqId, p = endpoint, v = method,
    c = S(cost), st = status}
  if ip then rec.ip = ip end
  if ua ~= '' then rec.ua = ua end
  redis.call('LPUSH', auditKey, cjson.encode(rec))
  redis.call('LTRIM', auditKey, 0, retention - 1)
end

local function finish(resKey, finKey, leaseKey, id, r, status, now, before)
  r.s = status
  redis.call('HSET', resKey, id, cjson.encode(r))
  redis.call('ZREM', leaseKey, id)
  redis.call('ZADD', finKey, S(now), id)
  -- Bounded forgetting of old finished ids (replays are answered within the retention).
  local old = redis.call('ZRANGEBYSCORE', finKey, '-inf', S(before), 'LIMIT', 0, 5)
  for _, x in ipairs(old) do
    redis.call('HDEL', resKey, x)
    redis.call('ZREM', finKey, x)
  end
end
