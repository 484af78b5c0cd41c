--[[
  Release a call's whole reservation (nothing charged: its audit record is the audit log's, written off the
  request). Idempotent; a no-op (with a clear code) after settle.

  KEYS[1] acct  KEYS[2] res  KEYS[3] expiry  KEYS[4] fin
  ARGV[1] requestId  [2] now  [3] forget finished before (ms)

  Returns {1, replay 0|1, releasedMsat} | {-7} unknown | {-9} already settled
]]
--- @include "num"
--- @include "key"
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
  finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'released', ARGV[2], ARGV[3])
  return {1, 1, amt}
end

local v = redis.call('HMGET', KEYS[1], 'reserved', r.h)
local reserved = N(v[1]) - amt
local k = parseKst(r.h, v[2])
k.r = k.r - amt
k.o = k.o - 1
finish(KEYS[2], KEYS[4], KEYS[3], id, r, 'released', ARGV[2], ARGV[3])
redis.call('HSET', KEYS[1], 'reserved', S(reserved), r.h, packKst(k))
return {1, 0, amt}
