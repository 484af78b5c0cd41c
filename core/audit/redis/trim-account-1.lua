--[[
  The hourly prune of one account's audit stream (core/audit/redis-audit.ts): trims it by age and deletes it
  when nothing is left. One step, so a record written meanwhile is either trimmed by age or keeps the stream
  (a later write creates it again; the account stays in the index while writers confirm it).

  KEYS[1] the account's audit-log stream
  ARGV[1] records before this go (ms)

  Returns the entries left
]]
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1])
local n = redis.call('XLEN', KEYS[1])
if n == 0 then redis.call('DEL', KEYS[1]) end
return n
