--[[
  Claims the lock of one prepaid node key (core/providers/node-account-store.ts): the one process that may create
  the key or top it up now. Free, expired, or already this owner's → taken (or extended) until now + ttl.

  KEYS[1] the node account hash ({node} slot)
  ARGV[1] owner (a process's random id)   ARGV[2] now ms   ARGV[3] ttl ms

  Returns 1 when the owner holds the lock now, 0 when another one does.
]]
local owner = redis.call('HGET', KEYS[1], 'lock_owner')
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'lock_until') or '0')
if owner and owner ~= ARGV[1] and untilMs > tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], 'lock_owner', ARGV[1], 'lock_until', tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1
