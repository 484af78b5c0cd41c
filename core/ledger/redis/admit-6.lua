--[[
  Admit one call: key valid → not expired → model allowed → rate limits → reserve, in one atomic step.
  Releases up to ARGV[15] expired leases of the account first.

  KEYS[1] acct   KEYS[2] keys   KEYS[3] kst   KEYS[4] res   KEYS[5] lease   KEYS[6] fin
  ARGV[1] keyHash  [2] requestId  [3] model  [4] clientIp ('' = none)  [5] maxMsat  [6] minMsat
  [7] leaseMs  [8] requests/min  [9] tokens/hour  [10] concurrent  [11] now (ms)
  [12] daily period id  [13] weekly period id  [14] monthly period id  [15] sweep limit

  Returns {1, reserved, available, keyMetaJson, rpmRemaining, rpmResetUnix}
    | {-1} invalid key | {-2, expiredAt} | {-3} model not allowed
    | {-4, limitType(1 rpm, 2 tokens/h, 3 concurrent), limit, remaining, resetUnix}
    | {-6} duplicate requestId | {-5, affordable, required, shortfall}
]]
--- @include "num"
--- @include "key"
--- @include "sweep"

-- Hot path: read and write only the fields this step uses (see docs/ledger.md, "Performance").
local now = tonumber(ARGV[11])
local a, av = loadNums(KEYS[1], {'balance', 'reserved', 'created', 'deleted'})
if not av[3] or a.deleted == 1 then return {-1} end
if sweep(a, KEYS[3], KEYS[4], KEYS[5], KEYS[6], now, tonumber(ARGV[15])) > 0 then
  redis.call('HSET', KEYS[1], 'reserved', S(a.reserved))
end

local k = loadKey(KEYS[2], KEYS[3], ARGV[1], {'r', 'o', 'pi', 'ps', 'rw', 'rc', 'tw', 'tc'})
if not k or k.meta.del == '1' then return {-1} end
local exp = expiredAt(k.meta, now)
if exp then return {-2, exp} end
if not modelAllowed(k.meta, ARGV[3]) then return {-3} end

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

local pi = k.pi
local periods = {daily = tonumber(ARGV[12]), weekly = tonumber(ARGV[13]), monthly = tonumber(ARGV[14])}
local free = math.min(a.balance - a.reserved, keyFree(k, periods))
if free < 0 then free = 0 end
local amount = math.min(tonumber(ARGV[5]), free)
local min = tonumber(ARGV[6])
local expires = now + tonumber(ARGV[7])
local r = {k = 'call', s = 'open', a = S(amount), h = ARGV[1], e = S(expires)}
if ARGV[4] ~= '' then r.ip = ARGV[4] end
-- The duplicate check and the record write are one HSETNX; a refusal after it takes the record back.
if redis.call('HSETNX', KEYS[4], ARGV[2], cjson.encode(r)) == 0 then return {-6} end
if amount < min then
  redis.call('HDEL', KEYS[4], ARGV[2])
  return {-5, free, min, min - free}
end

redis.call('ZADD', KEYS[5], r.e, ARGV[2])
redis.call('HSET', KEYS[1], 'reserved', S(a.reserved + amount))
k.r = k.r + amount
k.o = k.o + 1
k.lu = now
k.rw = rw
k.rc = rc + 1
if k.pi ~= pi then
  saveKst(KEYS[3], k, {'r', 'o', 'lu', 'rw', 'rc', 'pi', 'ps'})
else
  saveKst(KEYS[3], k, {'r', 'o', 'lu', 'rw', 'rc'})
end
local remaining = rpm - k.rc
if remaining < 0 then remaining = 0 end
return {1, amount, free - amount, k.raw, remaining, (rw + 1) * 60}
