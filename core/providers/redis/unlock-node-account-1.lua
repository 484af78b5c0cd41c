--[[
  Frees the lock of one prepaid node key (core/providers/node-account-store.ts), only when the caller holds it.

  KEYS[1] the node account hash ({node} slot)
  ARGV[1] owner

  Returns 1 when it was freed, 0 when the caller did not hold it (expired and taken by another process).
]]
if redis.call('HGET', KEYS[1], 'lock_owner') ~= ARGV[1] then
  return 0
end
redis.call('HDEL', KEYS[1], 'lock_owner', 'lock_until')
return 1
