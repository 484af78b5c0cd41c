--[[
  Hold an amount for a withdrawal or refund: it stays in the balance but is not spendable until
  commit-withdrawal or abort-withdrawal (or its expiry, which aborts it). Idempotent by holdId.
  A payout hold (ARGV[4] 'never'): no expiry (its expiry score is NEVER, so no sweep reaches it); the account's
  'payout' and 'payoutAt' fields name it until it is committed or aborted, and while they do every other
  hold of the account is refused.

  KEYS[1] acct  KEYS[2] keys  KEYS[3] res  KEYS[4] expiry  KEYS[5] fin
  ARGV[1] keyHash  [2] holdId  [3] amountMsat or 'all'  [4] expiresInMs or 'never'  [5] now  [6] kind
  ('withdrawal' | 'refund')  [7] sweep limit

  Returns {1, replay 0|1, held, available} | {-1} invalid key | {-10} child key | {-6} id already in use (holdId
    committed, aborted or another kind of record)
    | {-5, available, required, shortfall} | {-20, payout holdId, payout since (ms)} a payout is open
]]
--- @include "common"
--- @include "sweep"

local now = tonumber(ARGV[5])
local a = loadAcct(KEYS[1])
if not a or a.deleted == 1 then return {-1} end
if sweep(a, KEYS[1], KEYS[3], KEYS[4], KEYS[5], now, tonumber(ARGV[7])) > 0 then saveAcct(KEYS[1], a) end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return {-1} end
local m = cjson.decode(raw)
if m.del == '1' then return {-1} end
if m.child == '1' then return {-10} end

local free = a.balance - a.reserved
local prior = redis.call('HGET', KEYS[3], ARGV[2])
if prior then
  local p = cjson.decode(prior)
  if p.k ~= 'hold' or p.s ~= 'open' then return {-6} end
  return {1, 1, tonumber(p.a), free}
end
local open = redis.call('HMGET', KEYS[1], 'payout', 'payoutAt')
if open[1] then return {-20, open[1], open[2]} end
local amount
if ARGV[3] == 'all' then amount = free else amount = tonumber(ARGV[3]) end
if amount <= 0 or amount > free then
  local required = amount
  if required < 1 then required = 1 end
  return {-5, free, required, required - free}
end
a.reserved = a.reserved + amount
local expires
if ARGV[4] == 'never' then
  expires = NEVER
  redis.call('HSET', KEYS[1], 'payout', ARGV[2], 'payoutAt', ARGV[5])
else
  expires = now + tonumber(ARGV[4])
end
local r = {k = 'hold', s = 'open', a = S(amount), h = ARGV[1], e = S(expires), n = ARGV[6]}
redis.call('HSET', KEYS[3], ARGV[2], cjson.encode(r))
redis.call('ZADD', KEYS[4], S(expires), ARGV[2])
if expires < a.nsw then a.nsw = expires end
saveAcct(KEYS[1], a)
return {1, 0, amount, free - amount}
