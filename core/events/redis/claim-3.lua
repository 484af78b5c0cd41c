-- Claims an account's due deliveries for this process: each is claimed (its due time moves to now + claimMs);
-- deliveries of deleted or disabled webhooks are dropped.
-- KEYS[1] hooks  KEYS[2] out  KEYS[3] due
-- ARGV[1] now ms  ARGV[2] claim ms  ARGV[3] max deliveries
-- Returns: [deliveryId, deliveryJson, url, secret]... followed by the earliest remaining due time ('' if none).
local now, claimMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, did in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[2], did)
  local d = raw and cjson.decode(raw)
  local hraw = d and redis.call('HGET', KEYS[1], d.webhookId)
  local h = hraw and cjson.decode(hraw)
  if not d or not h or h.disabled then
    redis.call('HDEL', KEYS[2], did)
    redis.call('ZREM', KEYS[3], did)
  else
    redis.call('ZADD', KEYS[3], now + claimMs, did)
    table.insert(out, did)
    table.insert(out, raw)
    table.insert(out, h.url)
    table.insert(out, h.secret)
  end
end
local nxt = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
table.insert(out, nxt[2] or '')
return out
