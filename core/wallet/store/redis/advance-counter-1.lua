--[[
  advance-counter-1: raise a keyset's NUT-13 counter to at least ARGV[2] (never lowers it).

  KEYS[1]  counters hash   field keysetId -> next counter
  ARGV[1]  keysetId
  ARGV[2]  minimum next value
  Returns the counter after the call.
]]
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local want = tonumber(ARGV[2])
if cur < want then
  redis.call('HSET', KEYS[1], ARGV[1], want)
  return want
end
return cur
