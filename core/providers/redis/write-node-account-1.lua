--[[
  Writes the state of one prepaid node key (core/providers/node-account-store.ts) while the caller still holds
  its lock: the key once made, the payment on its way to the node (write-ahead: written BEFORE the token is
  sent, removed once the node confirmed it), the count of top-ups.

  KEYS[1] the node account hash ({node} slot)
  ARGV[1] owner   ARGV[2] now ms
  ARGV[3] api key, or '' to leave it
  ARGV[4] pending payment JSON, '' to leave it, '-' to remove it
  ARGV[5] top-ups to add (0 to leave the count)
  ARGV[6] the node's base URL (kept for the operator's eyes)

  Returns 1 when written, 0 when the caller no longer holds the lock (nothing written).
]]
if redis.call('HGET', KEYS[1], 'lock_owner') ~= ARGV[1] then
  return 0
end
if ARGV[3] ~= '' then
  if not redis.call('HGET', KEYS[1], 'api_key') then
    redis.call('HSET', KEYS[1], 'api_key', ARGV[3], 'created_at', ARGV[2])
  end
end
if ARGV[4] == '-' then
  redis.call('HDEL', KEYS[1], 'pending')
elseif ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'pending', ARGV[4])
end
if tonumber(ARGV[5]) > 0 then
  redis.call('HINCRBY', KEYS[1], 'topups', tonumber(ARGV[5]))
end
redis.call('HSET', KEYS[1], 'base_url', ARGV[6], 'updated_at', ARGV[2])
return 1
