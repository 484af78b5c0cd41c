--[[
  Release a call's whole reservation. Idempotent; a no-op (with a clear code) after settle.

  KEYS[1] acct  KEYS[2] kst  KEYS[3] res  KEYS[4] lease  KEYS[5] fin  KEYS[6] audit
  ARGV[1] requestId  [2] now  [3] audit retention  [4] forget finished before (ms)
  [5] write audit '1'|'0'  [6] endpoint  [7] method  [8] user agent  [9] response status

  Returns {1, replay 0|1, releasedMsat} | {-7} unknown | {-9} already settled
]]
--- @include "num"
--- @include "history"
--- @include "finish"

local id = ARGV[1]
local raw = redis.call('HGET', KEYS[3], id)
if not raw then return {-7} end
local r = cjson.decode(raw)
if r.k ~= 'call' then return {-7} end
if r.s == 'settled' then return {-9} end
local now = tonumber(ARGV[2])
local amt = tonumber(r.a)
if r.s == 'released' then return {1, 1, amt} end
if r.s == 'expired' then
  finish(KEYS[3], KEYS[5], KEYS[4], id, r, 'released', now, tonumber(ARGV[4]))
  return {1, 1, amt}
end

local a = loadNums(KEYS[1], {'reserved', 'auditseq'})
a.reserved = a.reserved - amt
local v = redis.call('HMGET', KEYS[2], r.h .. ':r', r.h .. ':o')
redis.call('HSET', KEYS[2], r.h .. ':r', S(N(v[1]) - amt), r.h .. ':o', S(N(v[2]) - 1))
if ARGV[5] == '1' then
  addAudit(KEYS[6], a, r.h, id, r.ip, ARGV[6], ARGV[7], ARGV[8], ARGV[9], 0, now, tonumber(ARGV[3]))
end
finish(KEYS[3], KEYS[5], KEYS[4], id, r, 'released', now, tonumber(ARGV[4]))
saveNums(KEYS[1], a, {'reserved', 'auditseq'})
return {1, 0, amt}
