--[[
  Resolves the key an update/delete acts on: the caller's own parent key, or one of its children by key
  id. Returns (code) on refusal or (0, hash, meta, acct).
]]
--- @include "acct"
local function keyTarget(acctKey, keysKey, callerHash, childKeyId)
  local a = loadAcct(acctKey)
  if not a or a.deleted == 1 then return -1 end
  local raw = redis.call('HGET', keysKey, callerHash)
  if not raw then return -1 end
  local m = cjson.decode(raw)
  if m.del == '1' then return -1 end
  if m.child == '1' then return -10 end
  if childKeyId == '' then return 0, callerHash, m, a end
  local all = redis.call('HGETALL', keysKey)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 16) == childKeyId then
      local cm = cjson.decode(all[i + 1])
      if cm.parent == callerHash and cm.del ~= '1' then return 0, all[i], cm, a end
    end
  end
  return -13
end
