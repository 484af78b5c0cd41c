--[[
  Update a key's allowed IPs, refund address or name (the caller's own parent key, or one of its
  children). Children cannot update keys.

  KEYS[1] acct  KEYS[2] keys
  ARGV[1] caller keyHash  [2] child key id ('' = the caller's key)  [3] changes JSON {field: value|null}
  (fields 'ips', 'ref', 'name'; null removes)

  Returns {1, keyHash, keyMetaJson} | {-1} invalid | {-10} caller is a child | {-13} no such child
]]
--- @include "common"
--- @include "key-target"

local code, kh, m = keyTarget(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
if code ~= 0 then return {code} end
for f, v in pairs(cjson.decode(ARGV[3])) do
  if v == cjson.null then m[f] = nil else m[f] = v end
end
local raw = cjson.encode(m)
redis.call('HSET', KEYS[2], kh, raw)
return {1, kh, raw}
