--[[
  Drops accounts from the audit index whose streams the prune deleted — each only if its score is still at
  or below the threshold, so an account a writer confirmed meanwhile (a newer score) stays listed.

  KEYS[1] the audit index (zset: account id → last confirmation, ms)
  ARGV[1] threshold (ms)  ARGV[2..] account ids

  Returns how many were dropped
]]
local limit = tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) <= limit then
    redis.call('ZREM', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
