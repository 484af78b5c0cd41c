-- fire(...): enqueues one delivery of event `etype` to every webhook of the account subscribed to it (the
-- key's own and its parent's webhooks, and the key's alert target); returns how many.
-- balanceStep(...): the balance.low decision for one watched key.
local function fire(hooksKey, outKey, dueKey, accountId, keyId, parentKeyId, etype, data, now, nowIso, evtId)
  local n = 0
  local all = redis.call('HGETALL', hooksKey)
  data.key_id = keyId
  local body = cjson.encode({id = evtId, type = etype, created_at = nowIso, data = data})
  for i = 1, #all, 2 do
    local w = cjson.decode(all[i + 1])
    local match = false
    if not w.disabled then
      for _, e in ipairs(w.events) do if e == etype then match = true end end
    end
    if match and ((w.kind == 'webhook' and (w.keyId == keyId or w.keyId == parentKeyId)) or (w.kind == 'alert' and w.keyId == keyId)) then
      local did = evtId .. ':' .. w.id
      redis.call('HSET', outKey, did, cjson.encode({msgId = evtId, webhookId = w.id, body = body, attempts = 0}))
      redis.call('ZADD', dueKey, now, did)
      n = n + 1
    end
  end
  return n
end
-- Only a credit re-arms (rearm): a spend's reported balance can be stale (a credit lease's settle leaves out
-- other processes' calls), so a higher spend report must not re-arm, or the next drop would fire again.
local function balanceStep(K, row, accountId, balance, rearm, now, nowIso, evtId)
  if row.low == nil or row.low == cjson.null then return 0 end
  if balance < row.low and row.armed then
    row.armed = false
    return fire(K[1], K[3], K[4], accountId, row.keyId, row.parentKeyId, 'balance.low', {balance = balance, threshold = row.low}, now, nowIso, evtId)
  end
  if rearm and balance >= row.low and not row.armed then row.armed = true end
  return 0
end
