--[[
  Commit a held withdrawal: the held amount leaves the balance for good (counted as withdrawn) and a
  'withdrawal' or 'refund' transaction is written. Idempotent. A hold whose expiry passed is committed
  only if what is available now covers it. With a debit (ARGV[6]), only that much of the hold (at most all
  of it) leaves the balance and the rest is released in the same step.

  KEYS[1] acct  KEYS[2] res  KEYS[3] expiry  KEYS[4] fin  KEYS[5] tx
  ARGV[1] holdId  [2] now  [3] accountId  [4] tx retention  [5] forget finished before (ms)
  ARGV[6] debit (msat) or '' for the whole hold

  Returns {1, replay 0|1, 'withdrawn,balance,txId'} | {-7} unknown | {-16} already aborted
    | {-12, available} expired and not covered
]]
--- @include "common"

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[2], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'hold' then return {-7} end
if r.s == 'committed' then return {1, 1, r.r} end
if r.s == 'aborted' then return {-16} end
local now = tonumber(ARGV[2])
-- A payout hold ends here (hold-withdrawal-5.lua): the account may hold again.
if redis.call('HGET', KEYS[1], 'payout') == id then redis.call('HDEL', KEYS[1], 'payout', 'payoutAt') end
local a = loadAcct(KEYS[1])
local held = 0
if r.s == 'open' then held = tonumber(r.a) end
local amt = tonumber(r.a)
if ARGV[6] ~= '' and tonumber(ARGV[6]) < amt then amt = tonumber(ARGV[6]) end
if held == 0 and a.balance - a.reserved < amt then
  local free = a.balance - a.reserved
  if free < 0 then free = 0 end
  return {-12, free}
end
a.reserved = a.reserved - held
a.balance = a.balance - amt
a.withdrawn = a.withdrawn + amt
local typ, desc = 'withdrawal', 'Withdrawal'
if r.n == 'refund' then typ, desc = 'refund', 'Refund' end
local txId = addTx(KEYS[5], a, ARGV[3], typ, -amt, desc, now, r.h, nil, '0', tonumber(ARGV[4]))
r.r = S(amt) .. ',' .. S(a.balance) .. ',' .. txId
finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'committed', now, tonumber(ARGV[5]))
saveAcct(KEYS[1], a)
return {1, 0, r.r}
