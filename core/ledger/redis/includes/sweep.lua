--[[
  Releases up to `limit` expired reservations of one account (calls and withdrawal holds) and marks them
  'expired'. Changes a.reserved (the caller saves it). A call's key counters live in the account hash:
  when the caller holds key `k` in memory (admit), that key is adjusted there (k.dirty is set, the
  caller writes it); any other key is read and written here.
]]
--- @include "num"
--- @include "key"
local function sweep(a, acctKey, resKey, expiryKey, finKey, now, limit, k)
  local ids = redis.call('ZRANGEBYSCORE', expiryKey, '-inf', S(now), 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', resKey, id)
    if raw then
      local r = cjson.decode(raw)
      local amt = tonumber(r.a)
      a.reserved = a.reserved - amt
      if r.k == 'call' then
        local x = k
        if not (k and r.h == k.hash) then x = parseKst(r.h, redis.call('HGET', acctKey, r.h)) end
        x.r = x.r - amt
        x.o = x.o - (tonumber(r.c) or 1) -- a credit lease holds c slots
        if x == k then k.dirty = true else redis.call('HSET', acctKey, r.h, packKst(x)) end
      end
      r.s = 'expired'
      redis.call('HSET', resKey, id, cjson.encode(r))
      redis.call('ZADD', finKey, S(now), id)
    end
    redis.call('ZREM', expiryKey, id)
  end
  return #ids
end

-- Lower bound for the next reservation expiry, kept in the account's 'nsw' field so admit can skip the sweep
-- query while nothing can have expired: the earliest remaining expiry, or never.
local NEVER = 9007199254740991
local function nextSweep(expiryKey)
  local first = redis.call('ZRANGE', expiryKey, 0, 0, 'WITHSCORES')
  if first[2] then return tonumber(first[2]) end
  return NEVER
end
