--[[
  Read-only snapshot of one account for key info and the audit: account fields, key metadata, key usage
  counters and the sum of the open reservations (those still on the lease set), all from one instant.

  KEYS[1] acct  KEYS[2] keys  KEYS[3] kst  KEYS[4] res  KEYS[5] lease
  ARGV[1] include keys '1'|'0'

  Returns {acctFlat, keysFlat, kstFlat, openReservedMsat}
]]
local open = 0
local ids = redis.call('ZRANGE', KEYS[5], 0, -1)
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[4], id)
  if raw then
    local r = cjson.decode(raw)
    if r.s == 'open' then open = open + tonumber(r.a) end
  end
end
local keys, kst = {}, {}
if ARGV[1] == '1' then
  keys = redis.call('HGETALL', KEYS[2])
  kst = redis.call('HGETALL', KEYS[3])
end
return {redis.call('HGETALL', KEYS[1]), keys, kst, string.format('%.0f', open)}
