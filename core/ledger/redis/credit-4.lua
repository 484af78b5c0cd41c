--[[
  Credit a redeemed token to an account, once: the account's 'cred' hash remembers every credited token
  hash with its transaction id (a second call is a replay). Modes: 'key' (existing key only), 'token'
  (token-hash identity, created on first credit), 'deposit' (new deposit-derived account + key; refuses
  when the account id is already taken by another deposit).

  KEYS[1] acct  KEYS[2] keys  KEYS[3] cred  KEYS[4] tx
  ARGV[1] mode  [2] keyHash  [3] tokenHash  [4] amountMsat  [5] description  [6] now  [7] accountId
  [8] tx retention  [9] key metadata JSON (token/deposit modes)

  Returns {1, replay 0|1, balance, txId, keyMetaJson} | {-1} invalid key | {-10} child key
    | {-14} account id taken (deposit)
]]
--- @include "common"

local prior = redis.call('HGET', KEYS[3], ARGV[3])
if prior then
  local a = loadAcct(KEYS[1])
  return {1, 1, a.balance, prior, redis.call('HGET', KEYS[2], ARGV[2]) or ''}
end
local now = tonumber(ARGV[6])
local mode = ARGV[1]
local a = loadAcct(KEYS[1])
if mode == 'deposit' then
  if a then return {-14} end
  a = newAcct(now)
  redis.call('HSET', KEYS[1], 'origin', ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[9])
elseif mode == 'token' and not a then
  a = newAcct(now)
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[9])
end
if not a or a.deleted == 1 then return {-1} end
local meta = redis.call('HGET', KEYS[2], ARGV[2])
if not meta then return {-1} end
local m = cjson.decode(meta)
if m.del == '1' then return {-1} end
if m.child == '1' then return {-10} end

local amt = tonumber(ARGV[4])
a.balance = a.balance + amt
a.deposited = a.deposited + amt
local txId = addTx(KEYS[4], a, ARGV[7], 'deposit', amt, ARGV[5], now, ARGV[2], nil, '0', tonumber(ARGV[8]))
redis.call('HSET', KEYS[3], ARGV[3], txId)
saveAcct(KEYS[1], a)
return {1, 0, a.balance, txId, meta}
