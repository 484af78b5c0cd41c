--[[
  Delete a key (the caller's own, or one of its children by key id). Deleting a parent key deletes the
  account: every key of it becomes invalid (the balance stays counted, so conservation still holds).

  KEYS[1] acct  KEYS[2] keys
  ARGV[1] caller keyHash  [2] child key id ('' = the caller's key)

  Returns {1, keyHash, keyMetaJson} | {-1} invalid | {-10} caller is a child | {-13} no such child
]]
--- @include "common"
--- @include "key-target"

local code, kh, m, a = keyTarget(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
if code ~= 0 then return {code} end
m.del = '1'
local raw = cjson.encode(m)
redis.call('HSET', KEYS[2], kh, raw)
if m.child ~= '1' then redis.call('HSET', KEYS[1], 'deleted', '1') end
return {1, kh, raw}
