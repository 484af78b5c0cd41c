--[[
  Release up to ARGV[2] expired reservations (calls and withdrawal holds) of one account.

  KEYS[1] acct  KEYS[2] res  KEYS[3] expiry  KEYS[4] fin
  ARGV[1] now  [2] limit

  Returns the number released.
]]
--- @include "common"
--- @include "sweep"

local a = loadAcct(KEYS[1])
if not a then return 0 end
local n = sweep(a, KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]), tonumber(ARGV[2]))
if n > 0 then saveAcct(KEYS[1], a) end
return n
