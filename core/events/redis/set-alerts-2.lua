-- Stores a key's alert settings and its alert target (`alert_<keyId>`, or removes it without a URL).
-- KEYS[1] hooks  KEYS[2] keys
-- ARGV[1] key JSON  ARGV[2] low threshold msat or ''  ARGV[3] daily limit msat or ''  ARGV[4] webhook URL or ''
-- ARGV[5] signing secret ('' = keep the target's)  ARGV[6] now ms
-- Returns: 1, or an error when a new URL comes without a secret.
--- @include "watch"
local row = watch(KEYS[2], cjson.decode(ARGV[1]))
local low = ARGV[2] == '' and cjson.null or tonumber(ARGV[2])
-- A new threshold is a new alert: armed (the old one's state says nothing about it).
if low ~= row.low then row.armed = true end
row.low = low
row.daily = ARGV[3] == '' and cjson.null or tonumber(ARGV[3])
redis.call('HSET', KEYS[2], row.keyId, cjson.encode(row))
local id = 'alert_' .. row.keyId
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[1], id)
  return 1
end
local old = redis.call('HGET', KEYS[1], id)
local secret = ARGV[5]
local created = tonumber(ARGV[6])
if old then
  local o = cjson.decode(old)
  if secret == '' then secret = o.secret end
  created = o.createdAtMs
end
if secret == '' then return redis.error_reply('setAlerts: a new webhook_url needs a secret') end
local k = cjson.decode(ARGV[1])
redis.call('HSET', KEYS[1], id, cjson.encode({id = id, accountId = k.accountId, keyId = row.keyId, kind = 'alert', url = ARGV[4],
  events = {'balance.low', 'key.expired', 'spend.daily_limit'}, secret = secret, createdAtMs = created, disabled = false}))
return 1
