--[[
  Marks a reservation or hold finished: stores its final record, takes it off the expiry set and
  remembers it (for idempotent replays) until `before` passes, forgetting up to 5 older ones per call.
  `now` and `before` may be numbers or decimal strings (ARGV values).
]]
--- @include "num"
local function finish(resKey, finKey, expiryKey, id, r, status, now, before)
  r.s = status
  redis.call('HSET', resKey, id, cjson.encode(r))
  redis.call('ZREM', expiryKey, id)
  redis.call('ZADD', finKey, Sx(now), id)
  local old = redis.call('ZRANGEBYSCORE', finKey, '-inf', Sx(before), 'LIMIT', 0, 5)
  for _, x in ipairs(old) do
    redis.call('HDEL', resKey, x)
    redis.call('ZREM', finKey, x)
  end
end
