--[[
  Settle a call: charge min(cost, reserved + what is still available), release the rest, count tokens
  and the request, write the usage transaction and the call's audit record. Idempotent by requestId (a replay
  writes nothing).
  An expired reservation (already released by a sweep) is charged from what is available now.

  KEYS[1] acct  KEYS[2] keys  KEYS[3] res  KEYS[4] expiry  KEYS[5] fin  KEYS[6] tx  KEYS[7] audit-log
  ARGV[1] requestId  [2] costMsat  [3] tokens  [4] model  [5] description  [6] estimated '1'|'0'
  [7] now  [8] daily  [9] weekly  [10] monthly period ids  [11] accountId  [12] tx retention
  [13] audit records before this go (ms)  [14] forget finished before (ms)
  [15] the audit record without its cost (JSON; '' = none)  [16] transaction type ('usage' | 'batch')

  Returns {1, replay 0|1, 'charged,released,overrun,balance,txId'} | {-7} unknown | {-8} already released

  Hot path (docs/ledger.md, "Performance"): the key's metadata is read only for limited children
  (flag 'c' in the reservation); account fields and the key's packed counters are one HMGET and one HSET.
]]
--- @include "num"
--- @include "key"
--- @include "history"
--- @include "finish"

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[3], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'call' then return {-7} end
if r.s == 'settled' then return {1, 1, r.r} end
if r.s == 'released' then return {-8} end

local now = tonumber(ARGV[7])
local v = redis.call('HMGET', KEYS[1], 'balance', 'reserved', 'spent', 'requests', 'txseq', r.h)
local a = {balance = N(v[1]), reserved = N(v[2]), spent = N(v[3]), requests = N(v[4]), txseq = N(v[5])}
local k = parseKst(r.h, v[6])
local held = 0
if r.s == 'open' then held = tonumber(r.a) end
local free = a.balance - a.reserved
if r.c == '1' then
  local m = cjson.decode(redis.call('HGET', KEYS[2], r.h))
  free = math.min(free, keyFree(k, m, ARGV[8], ARGV[9], ARGV[10]))
end
if free < 0 then free = 0 end
local cost = tonumber(ARGV[2])
local charge = math.min(cost, held + free)

a.balance = a.balance - charge
a.reserved = a.reserved - held
a.spent = a.spent + charge
a.requests = a.requests + 1
k.r = k.r - held
if r.s == 'open' then k.o = k.o - 1 end
k.ts = k.ts + charge
k.tr = k.tr + 1
k.ps = k.ps + charge
k.lu = now
local tw = math.floor(now / 3600000)
if k.tw ~= tw then
  k.tw = tw
  k.tc = 0
end
k.tc = k.tc + tonumber(ARGV[3])

local txId = addTx(KEYS[6], a, ARGV[11], ARGV[16], -charge, ARGV[5], ARGV[7], r.h, ARGV[4], ARGV[6],
  tonumber(ARGV[12]))
if ARGV[15] ~= '' then addAudit(KEYS[7], ARGV[15], charge, ARGV[13]) end
local released = held - charge
if released < 0 then released = 0 end
r.r = S(charge) .. ',' .. S(released) .. ',' .. S(cost - charge) .. ',' .. S(a.balance) .. ',' .. txId
finish(KEYS[3], KEYS[5], KEYS[4], id, r, 'settled', ARGV[7], ARGV[14])
redis.call('HSET', KEYS[1], 'balance', S(a.balance), 'reserved', S(a.reserved), 'spent', S(a.spent),
  'requests', S(a.requests), 'txseq', S(a.txseq), r.h, packKst(k))
return {1, 0, r.r}
