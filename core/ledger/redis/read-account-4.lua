--[[
  Read-only snapshot of one account for key info and the audit: account fields with the keys' packed
  usage counters, key metadata and the sum of the open reservations (those still on the expiry set), all
  from one instant.

  KEYS[1] acct  KEYS[2] keys  KEYS[3] res  KEYS[4] expiry
  ARGV[1] include keys '1'|'0'

  Returns {acctFlat, keysFlat, openReservedMsat}
]]
local open = 0
local ids = redis.call('ZRANGE', KEYS[4], 0, -1)
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[3], id)
  if raw then
    local r = cjson.decode(raw)
    if r.s == 'open' then open = open + tonumber(r.a) end
  end
end
local keys = {}
if ARGV[1] == '1' then keys = redis.call('HGETALL', KEYS[2]) end
return {redis.call('HGETALL', KEYS[1]), keys, string.format('%d', open)}
