-- Watches keys of one account (their expiry for key.expired), keeping the state of those already watched.
-- KEYS[1] keys
-- ARGV[1..n] key JSON {accountId, keyId, parentKeyId, expiresAt}
-- Returns: n.
--- @include "watch"
for i = 1, #ARGV do
  local row = watch(KEYS[1], cjson.decode(ARGV[i]))
  redis.call('HSET', KEYS[1], row.keyId, cjson.encode(row))
end
return #ARGV
