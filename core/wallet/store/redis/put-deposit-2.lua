--[[
  put-deposit-2: write a Lightning deposit record unless the stored one is final, and keep the open index in step.

  KEYS[1]  the record                 string  deposit JSON
  KEYS[2]  open deposits              zset    idHash -> next attempt (ms)
  ARGV[1]  the record's JSON
  ARGV[2]  its status (pending | paid | issued | expired)
  ARGV[3]  its next attempt, ms
  ARGV[4]  its idHash

  Returns 1 when written, 0 when the stored record is already issued or expired (states never go back).
  Both keys live in the wallet's slot ({wallet}).
]]
local cur = redis.call('GET', KEYS[1])
if cur then
  local st = cjson.decode(cur).status
  if st == 'issued' or st == 'expired' then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] == 'pending' or ARGV[2] == 'paid' then
  redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[4])
else
  redis.call('ZREM', KEYS[2], ARGV[4])
end
return 1
