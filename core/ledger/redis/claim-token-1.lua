--[[
  Claim a token hash for one account, the global half of credit-once (the account half is the 'cred'
  hash inside credit-4.lua). The claim lives in the token's own slot, so it works on Redis Cluster; a
  crash between claim and credit is healed by retrying with the same account.

  KEYS[1] claim key ({t:<tokenHash>})
  ARGV[1] accountId  [2] mode: 'claim' | 'move' (CAS from ARGV[3]) | 'drop' (delete if owned by ARGV[1]
  and ARGV[3] = '0' meaning never credited)
  [3] previous owner (move) / '0' (drop)

  Returns the owner after the call ('' when dropped).
]]
local cur = redis.call('GET', KEYS[1])
local mode = ARGV[2]
if mode == 'claim' then
  if not cur then
    redis.call('SET', KEYS[1], ARGV[1])
    return ARGV[1]
  end
  return cur
elseif mode == 'move' then
  if cur == ARGV[3] then
    redis.call('SET', KEYS[1], ARGV[1])
    return ARGV[1]
  end
  return cur or ''
else
  if cur == ARGV[1] then
    redis.call('DEL', KEYS[1])
    return ''
  end
  return cur or ''
end
