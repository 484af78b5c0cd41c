--[[
  Admit one call: key valid → not expired → model allowed → rate limits → reserve, in one atomic step.
  Releases up to ARGV[15] expired reservations of the account first (skipped while the account's 'nsw' says
  no reservation can have expired yet).

  KEYS[1] acct   KEYS[2] keys   KEYS[3] res   KEYS[4] expiry   KEYS[5] fin
  ARGV[1] keyHash  [2] requestId  [3] model  [4] clientIp ('' = none)  [5] maxMsat  [6] minMsat
  [7] expiresInMs  [8] requests/min  [9] tokens/hour  [10] concurrent  [11] now (ms)
  [12] daily period id  [13] weekly period id  [14] monthly period id  [15] sweep limit

  Returns {1, reserved, available, keyMetaJson, rpmRemaining, rpmResetUnix}
    | {-1} invalid key | {-2, expiredAt} | {-3} model not allowed
    | {-4, limitType(1 rpm, 2 tokens/h, 3 concurrent), limit, remaining, resetUnix}
    | {-6} id already in use (requestId) | {-5, affordable, required, shortfall}
    | {-19} the key, or its account's parent key, is disabled by the operator

  Hot path (docs/ledger.md, "Performance"): one HMGET for the account fields and the key's packed
  counters, one HGET for the key's metadata, HSETNX of the reservation, ZADD of its expiry, one HSET back.
]]
--- @include "num"
--- @include "key"
--- @include "sweep"

local now = tonumber(ARGV[11])
local kh = ARGV[1]
local v = redis.call('HMGET', KEYS[1], 'balance', 'reserved', 'created', 'deleted', 'nsw', kh, 'disabled')
if not v[3] or v[4] == '1' then return {-1} end
local balance, reserved, nsw = N(v[1]), N(v[2]), N(v[5])
local k = parseKst(kh, v[6])
if now >= nsw then
  local a = {reserved = reserved}
  local swept = sweep(a, KEYS[1], KEYS[3], KEYS[4], KEYS[5], now, tonumber(ARGV[15]), k)
  reserved = a.reserved
  nsw = nextSweep(KEYS[4])
  if swept > 0 then redis.call('HSET', KEYS[1], 'reserved', S(reserved)) end
  if k.dirty then redis.call('HSET', KEYS[1], kh, packKst(k)) end
  redis.call('HSET', KEYS[1], 'nsw', S(nsw))
end

local raw = redis.call('HGET', KEYS[2], kh)
if not raw then return {-1} end
local m = cjson.decode(raw)
if m.del == '1' then return {-1} end
if v[7] == '1' or m.dis == '1' then return {-19} end
local exp = expiredAt(m, now)
if exp then return {-2, exp} end
if not modelAllowed(m, ARGV[3]) then return {-3} end

local rpm, tph, conc = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local rw = math.floor(now / 60000)
local rc = 0
if k.rw == rw then rc = k.rc end
if rc >= rpm then return {-4, 1, rpm, 0, (rw + 1) * 60} end
local tw = math.floor(now / 3600000)
local tc = 0
if k.tw == tw then tc = k.tc end
if tc >= tph then return {-4, 2, tph, 0, (tw + 1) * 3600} end
if k.o >= conc then return {-4, 3, conc, 0, math.ceil(now / 1000)} end

local free = math.min(balance - reserved, keyFree(k, m, ARGV[12], ARGV[13], ARGV[14]))
if free < 0 then free = 0 end
local amount = math.min(tonumber(ARGV[5]), free)
local min = tonumber(ARGV[6])
local expires = now + tonumber(ARGV[7])
local r = {k = 'call', s = 'open', a = S(amount), h = kh, e = S(expires)}
if ARGV[4] ~= '' then r.ip = ARGV[4] end
-- Settle needs the key's metadata only for limited children (limits never change after creation).
if limitedChild(m) then r.c = '1' end
-- The duplicate check and the record write are one HSETNX; a refusal after it takes the record back.
if redis.call('HSETNX', KEYS[3], ARGV[2], cjson.encode(r)) == 0 then return {-6} end
if amount < min then
  redis.call('HDEL', KEYS[3], ARGV[2])
  return {-5, free, min, min - free}
end

redis.call('ZADD', KEYS[4], r.e, ARGV[2])
k.r = k.r + amount
k.o = k.o + 1
k.lu = now
k.rw = rw
k.rc = rc + 1
if expires < nsw then
  redis.call('HSET', KEYS[1], 'reserved', S(reserved + amount), kh, packKst(k), 'nsw', r.e)
else
  redis.call('HSET', KEYS[1], 'reserved', S(reserved + amount), kh, packKst(k))
end
local remaining = rpm - k.rc
if remaining < 0 then remaining = 0 end
return {1, amount, free - amount, raw, remaining, (rw + 1) * 60}
