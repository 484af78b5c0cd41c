--[[
  Update a key's allowed IPs, refund address, name or disabled flag (the caller's own parent key, or one of
  its children). Children cannot update keys. Disabling a parent key also marks its account 'disabled', so
  every child is refused with it (admit, count-request and lease read that field).

  KEYS[1] acct  KEYS[2] keys
  ARGV[1] caller keyHash  [2] child key id ('' = the caller's key)  [3] changes JSON {field: value|null}
  (fields 'ips', 'ref', 'name', 'dis' ('1' = disabled); null removes)

  Returns {1, keyHash, keyMetaJson} | {-1} invalid | {-10} caller is a child | {-13} no such child
]]
--- @include "common"
--- @include "key-target"

local code, kh, m = keyTarget(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
if code ~= 0 then return {code} end
local changes = cjson.decode(ARGV[3])
for f, v in pairs(changes) do
  if v == cjson.null then m[f] = nil else m[f] = v end
end
if changes.dis ~= nil and m.child ~= '1' then
  local off = '0'
  if m.dis == '1' then off = '1' end
  redis.call('HSET', KEYS[1], 'disabled', off)
end
local raw = cjson.encode(m)
redis.call('HSET', KEYS[2], kh, raw)
return {1, kh, raw}
