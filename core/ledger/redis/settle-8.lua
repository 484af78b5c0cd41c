--[[
  Settle a call: charge min(cost, reserved + what is still available), release the rest, count tokens
  and the request, write the usage transaction and the audit record. Idempotent by requestId.
  A lease-expired reservation (already released by a sweep) is charged from what is available now.

  KEYS[1] acct  KEYS[2] keys  KEYS[3] kst  KEYS[4] res  KEYS[5] lease  KEYS[6] fin  KEYS[7] tx  KEYS[8] audit
  ARGV[1] requestId  [2] costMsat  [3] tokens  [4] model  [5] description  [6] estimated '1'|'0'
  [7] now  [8] daily  [9] weekly  [10] monthly period ids  [11] accountId  [12] tx retention
  [13] audit retention  [14] forget finished before (ms)  [15] write audit '1'|'0'  [16] endpoint
  [17] method  [18] user agent  [19] response status

  Returns {1, replay 0|1, 'charged,released,overrun,balance,txId'} | {-7} unknown | {-8} already released
]]
--- @include "num"
--- @include "key"
--- @include "history"
--- @include "finish"

-- Hot path: read and write only the fields this step uses (see docs/ledger.md, "Performance").
local ACCT = {'balance', 'reserved', 'spent', 'requests', 'txseq', 'auditseq'}

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[4], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'call' then return {-7} end
if r.s == 'settled' then return {1, 1, r.r} end
if r.s == 'released' then return {-8} end

local now = tonumber(ARGV[7])
local a = loadNums(KEYS[1], ACCT)
local k = loadKey(KEYS[2], KEYS[3], r.h, {'r', 'o', 'pi', 'ps', 'ts', 'tr', 'tw', 'tc'})
local periods = {daily = tonumber(ARGV[8]), weekly = tonumber(ARGV[9]), monthly = tonumber(ARGV[10])}
local held = 0
if r.s == 'open' then held = tonumber(r.a) end
local free = math.min(a.balance - a.reserved, keyFree(k, periods))
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

local txId = addTx(KEYS[7], a, ARGV[11], 'usage', -charge, ARGV[5], now, r.h, ARGV[4], ARGV[6],
  tonumber(ARGV[12]))
if ARGV[15] == '1' then
  addAudit(KEYS[8], a, r.h, id, r.ip, ARGV[16], ARGV[17], ARGV[18], ARGV[19], charge, now, tonumber(ARGV[13]))
end
local released = held - charge
if released < 0 then released = 0 end
r.r = S(charge) .. ',' .. S(released) .. ',' .. S(cost - charge) .. ',' .. S(a.balance) .. ',' .. txId
finish(KEYS[4], KEYS[6], KEYS[5], id, r, 'settled', now, tonumber(ARGV[14]))
saveNums(KEYS[1], a, ACCT)
saveKst(KEYS[3], k, {'r', 'o', 'pi', 'ps', 'ts', 'tr', 'lu', 'tw', 'tc'})
return {1, 0, r.r}
