-- watch(keysKey, k): the watched-key row of key `k` (created armed, with nothing set, when new); its expiry
-- is refreshed from `k`. The caller writes it back.
local function watch(keysKey, k)
  local raw = redis.call('HGET', keysKey, k.keyId)
  local row
  if raw then row = cjson.decode(raw) else
    row = {keyId = k.keyId, parentKeyId = k.parentKeyId, low = cjson.null, daily = cjson.null, armed = true, day = '', daySpent = 0, dayFired = '', expiredFired = false}
  end
  row.expiresAt = k.expiresAt
  return row
end
