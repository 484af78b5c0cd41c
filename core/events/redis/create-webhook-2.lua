-- Registers a webhook and watches its key.
-- KEYS[1] hooks  KEYS[2] keys
-- ARGV[1] key JSON {accountId, keyId, parentKeyId, expiresAt}  ARGV[2] webhook JSON
-- Returns: 1.
--- @include "watch"
local row = watch(KEYS[2], cjson.decode(ARGV[1]))
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local hook = cjson.decode(ARGV[2])
redis.call('HSET', KEYS[1], hook.id, ARGV[2])
return 1
