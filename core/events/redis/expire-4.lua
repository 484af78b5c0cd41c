-- key.expired for one watched key whose expiry has passed, once.
-- KEYS[1] hooks  KEYS[2] keys  KEYS[3] out  KEYS[4] due
-- ARGV[1] accountId  ARGV[2] keyId  ARGV[3] now ms  ARGV[4] now ISO  ARGV[5] event id  ARGV[6] expired_at ISO
-- Returns: the number of deliveries enqueued (0: not expired, already fired, or not watched).
--- @include "fire"
local raw = redis.call('HGET', KEYS[2], ARGV[2])
if not raw then return 0 end
local row = cjson.decode(raw)
if row.expiredFired or row.expiresAt == cjson.null or row.expiresAt == nil or row.expiresAt > tonumber(ARGV[3]) then return 0 end
row.expiredFired = true
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local expiredAt = ARGV[6]
return fire(KEYS[1], KEYS[3], KEYS[4], ARGV[1], row.keyId, row.parentKeyId, 'key.expired', {expired_at = expiredAt}, tonumber(ARGV[3]), ARGV[4], ARGV[5])
