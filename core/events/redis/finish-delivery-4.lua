-- Records one delivery attempt and its outcome: delivered (dropped from the outbox), retry (attempts + 1, due
-- at the retry time), or disable (410 Gone: the webhook is disabled and its pending deliveries dropped).
-- KEYS[1] hooks  KEYS[2] out  KEYS[3] due  KEYS[4] the webhook's delivery log
-- ARGV[1] deliveryId  ARGV[2] webhookId  ARGV[3] log entry JSON  ARGV[4] done|retry|disable  ARGV[5] retry at ms
-- ARGV[6] log entries kept
-- Returns: 1.
redis.call('LPUSH', KEYS[4], ARGV[3])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[6]) - 1)
local mode = ARGV[4]
if mode == 'disable' then
  local raw = redis.call('HGET', KEYS[1], ARGV[2])
  if raw then
    local h = cjson.decode(raw)
    h.disabled = true
    redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(h))
  end
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    if cjson.decode(all[i + 1]).webhookId == ARGV[2] then
      redis.call('HDEL', KEYS[2], all[i])
      redis.call('ZREM', KEYS[3], all[i])
    end
  end
elseif mode == 'done' then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  local raw = redis.call('HGET', KEYS[2], ARGV[1])
  if raw then
    local d = cjson.decode(raw)
    d.attempts = d.attempts + 1
    redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(d))
    redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[1])
  end
end
return 1
