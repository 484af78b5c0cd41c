--[[
  Release a call's whole reservation. Idempotent; a no-op (with a clear code) after settle.

  KEYS[1] acct  KEYS[2] res  KEYS[3] lease  KEYS[4] fin  KEYS[5] audit
  ARGV[1] requestId  [2] now  [3] audit retention  [4] forget finished before (ms)
  [5] write audit '1'|'0'  [6] endpoint  [7] method  [8] user agent  [9] response status

  Returns {1, replay 0|1, releasedMsat} | {-7} unknown | {-9} already settled
]]
--- @include "num"
--- @include "key"
--- @include "history"
--- @include "finish"

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[2], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'call' then return {-7} end
if r.s == 'settled' then return {-9} end
local amt = tonumber(r.a)
if r.s == 'released' then return {1, 1, amt} end
if r.s == 'expired' then
  finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'released', ARGV[2], ARGV[4])
  return {1, 1, amt}
end

local v = redis.call('HMGET', KEYS[1], 'reserved', 'auditseq', r.h)
local a = {reserved = N(v[1]) - amt, auditseq = N(v[2])}
local k = parseKst(r.h, v[3])
k.r = k.r - amt
k.o = k.o - 1
if ARGV[5] == '1' then
  addAudit(KEYS[5], a, r.h, id, r.ip, ARGV[6], ARGV[7], ARGV[8], ARGV[9], 0, ARGV[2], tonumber(ARGV[3]))
end
finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'released', ARGV[2], ARGV[4])
redis.call('HSET', KEYS[1], 'reserved', S(a.reserved), 'auditseq', S(a.auditseq), r.h, packKst(k))
return {1, 0, amt}
