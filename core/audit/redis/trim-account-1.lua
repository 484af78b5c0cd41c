--[[
  The hourly prune of an account whose audit stream saw no write for longer than the retention (its index
  score is that old, core/ledger/redis/audit-index.ts): trims the stream by age and deletes it when nothing
  is left. One step, so a record written meanwhile is either trimmed by age or keeps the stream.

  KEYS[1] the account's audit-log stream
  ARGV[1] records before this go (ms)

  Returns the entries left
]]
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1])
local n = redis.call('XLEN', KEYS[1])
if n == 0 then redis.call('DEL', KEYS[1]) end
return n
