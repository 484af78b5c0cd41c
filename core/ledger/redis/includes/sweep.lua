--[[
  Releases up to `limit` expired leases of one account (calls and withdrawal holds) and marks them
  'expired'. Changes only a.reserved (the caller saves it).
]]
--- @include "num"
local function sweep(a, kstKey, resKey, leaseKey, finKey, now, limit)
  local ids = redis.call('ZRANGEBYSCORE', leaseKey, '-inf', S(now), 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', resKey, id)
    if raw then
      local r = cjson.decode(raw)
      local amt = tonumber(r.a)
      a.reserved = a.reserved - amt
      if r.k == 'call' then
        local v = redis.call('HMGET', kstKey, r.h .. ':r', r.h .. ':o')
        redis.call('HSET', kstKey, r.h .. ':r', S(N(v[1]) - amt), r.h .. ':o', S(N(v[2]) - 1))
      end
      r.s = 'expired'
      redis.call('HSET', resKey, id, cjson.encode(r))
      redis.call('ZADD', finKey, S(now), id)
    end
    redis.call('ZREM', leaseKey, id)
  end
  return #ids
end
