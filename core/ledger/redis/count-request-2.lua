--[[
  Count one request that moves no money (wallet, balance, estimate, webhook endpoints) against the key's
  requests-per-minute window — the counter `admit` uses — without reserving anything.

  KEYS[1] acct  KEYS[2] keys
  ARGV[1] keyHash  [2] requests/min  [3] now (ms)

  Returns {1, rpmRemaining, rpmResetUnix} | {-1} invalid key | {-4, 1, limit, 0, resetUnix}
    | {-19} the key, or its account's parent key, is disabled
]]
--- @include "num"
--- @include "key"

local now = tonumber(ARGV[3])
local kh = ARGV[1]
local v = redis.call('HMGET', KEYS[1], 'created', 'deleted', kh, 'disabled')
if not v[1] or v[2] == '1' then return {-1} end
local raw = redis.call('HGET', KEYS[2], kh)
if not raw then return {-1} end
local m = cjson.decode(raw)
if m.del == '1' then return {-1} end
if v[4] == '1' or m.dis == '1' then return {-19} end
local k = parseKst(kh, v[3])
local rpm = tonumber(ARGV[2])
local rw = math.floor(now / 60000)
local rc = 0
if k.rw == rw then rc = k.rc end
if rc >= rpm then return {-4, 1, rpm, 0, (rw + 1) * 60} end
k.rw = rw
k.rc = rc + 1
redis.call('HSET', KEYS[1], kh, packKst(k))
return {1, rpm - k.rc, (rw + 1) * 60}
