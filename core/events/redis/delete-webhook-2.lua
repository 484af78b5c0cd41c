-- Deletes a key's own webhook and its delivery log (pending deliveries are dropped when next claimed).
-- KEYS[1] hooks  KEYS[2] the webhook's delivery log
-- ARGV[1] webhookId  ARGV[2] keyId of the caller
-- Returns: 1 when deleted, 0 when there is no such webhook of that key.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local h = cjson.decode(raw)
if h.kind ~= 'webhook' or h.keyId ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
