-- A balance change of an account (a settle, a credit, a withdrawal): balance.low and spend.daily_limit
-- decisions for its watched keys, and the deliveries they enqueue, in one step.
-- KEYS[1] hooks  KEYS[2] keys  KEYS[3] out  KEYS[4] due
-- ARGV[1] accountId  ARGV[2] keyId  ARGV[3] parentKeyId  ARGV[4] charged msat  ARGV[5] balance msat
-- ARGV[6] now ms  ARGV[7] now ISO  ARGV[8] UTC day  ARGV[9] event id base
-- ARGV[10] rearm ('1' = a credit: balance.low re-arms at or above the threshold)
-- Returns: the number of deliveries enqueued.
--- @include "fire"
local accountId, keyId, parentKeyId = ARGV[1], ARGV[2], ARGV[3]
local charged, balance, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local nowIso, day, base = ARGV[7], ARGV[8], ARGV[9]
local rearm = ARGV[10] == '1'
local n, seq = 0, 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local row = cjson.decode(all[i + 1])
  seq = seq + 1
  n = n + balanceStep(KEYS, row, accountId, balance, rearm, now, nowIso, base .. 'b' .. seq)
  if charged > 0 and (row.keyId == keyId or row.keyId == parentKeyId) then
    local spent = charged
    if row.day == day then spent = row.daySpent + charged end
    row.day = day
    row.daySpent = spent
    if row.daily ~= nil and row.daily ~= cjson.null and row.dayFired ~= day and spent >= row.daily then
      row.dayFired = day
      n = n + fire(KEYS[1], KEYS[3], KEYS[4], accountId, row.keyId, row.parentKeyId, 'spend.daily_limit', {day = day, spent = spent, limit = row.daily}, now, nowIso, base .. 'd' .. seq)
    end
  end
  redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
end
return n
