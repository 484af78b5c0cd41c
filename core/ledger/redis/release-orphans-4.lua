--[[
  Release the open reservations (calls and withdrawal holds) of one account that belong to dead processes: their ids
  carry `~<processId>~` (core/ledger/owner.ts). They are expired now and swept like any expired reservation, exactly
  once (a reservation already released is gone from the expiry set).

  KEYS[1] acct  KEYS[2] res  KEYS[3] expiry  KEYS[4] fin
  ARGV[1] now  [2] limit  [3..] dead process ids

  Returns the number released.
]]
--- @include "common"
--- @include "sweep"

local a = loadAcct(KEYS[1])
if not a then return 0 end
local expired = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  for i = 3, #ARGV do
    if string.find(id, '~' .. ARGV[i] .. '~', 1, true) then
      redis.call('ZADD', KEYS[3], 0, id)
      expired = expired + 1
      break
    end
  end
end
if expired == 0 then return 0 end
local n = sweep(a, KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]), tonumber(ARGV[2]))
if n > 0 then saveAcct(KEYS[1], a) end
return n
