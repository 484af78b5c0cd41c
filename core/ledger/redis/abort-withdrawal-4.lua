--[[
  Abort a held withdrawal: the amount becomes spendable again. Idempotent; refused after commit.

  KEYS[1] acct  KEYS[2] res  KEYS[3] expiry  KEYS[4] fin
  ARGV[1] holdId  [2] now  [3] forget finished before (ms)

  Returns {1, replay 0|1, releasedMsat} | {-7} unknown | {-17} already committed
]]
--- @include "common"

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[2], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'hold' then return {-7} end
if r.s == 'committed' then return {-17} end
local now = tonumber(ARGV[2])
-- A payout hold ends here (hold-withdrawal-5.lua): the account may hold again.
if redis.call('HGET', KEYS[1], 'payout') == id then redis.call('HDEL', KEYS[1], 'payout', 'payoutAt') end
local amt = tonumber(r.a)
if r.s ~= 'open' then
  if r.s == 'expired' then finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'aborted', now, tonumber(ARGV[3])) end
  return {1, 1, amt}
end
local a = loadAcct(KEYS[1])
a.reserved = a.reserved - amt
finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'aborted', now, tonumber(ARGV[3]))
saveAcct(KEYS[1], a)
return {1, 0, amt}
