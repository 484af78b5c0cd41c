--[[
  Keys: metadata JSON in the `keys` hash, usage counters in the `kst` hash as '<keyHash>:<name>' fields
  (r reserved, o open, pi period id, ps period spent, ts total spent, tr total requests, lu last used,
  rw/rc requests-per-minute window and count, tw/tc tokens-per-hour window and count).
]]
--- @include "num"
local KST = {'r', 'o', 'pi', 'ps', 'ts', 'tr', 'lu', 'rw', 'rc', 'tw', 'tc'}

-- nil when the key is unknown. Loads the counters named in `names` (default all); k.meta is the decoded
-- metadata, k.raw the stored JSON.
local function loadKey(keysKey, kstKey, kh, names)
  local raw = redis.call('HGET', keysKey, kh)
  if not raw then return nil end
  names = names or KST
  local fields = {}
  for i = 1, #names do fields[i] = kh .. ':' .. names[i] end
  local v = redis.call('HMGET', kstKey, unpack(fields))
  local k = {hash = kh, meta = cjson.decode(raw), raw = raw}
  for i = 1, #names do k[names[i]] = N(v[i]) end
  return k
end

-- Writes the counters named in `names` (default all) in one HSET.
local function saveKst(kstKey, k, names)
  names = names or KST
  local args = {}
  for i = 1, #names do
    args[2 * i - 1] = k.hash .. ':' .. names[i]
    args[2 * i] = S(k[names[i]])
  end
  redis.call('HSET', kstKey, unpack(args))
end

local function expiredAt(m, now)
  local at = nil
  if m.exp and tonumber(m.exp) <= now then at = tonumber(m.exp) end
  if m.vd and tonumber(m.vd) <= now then
    if at == nil or tonumber(m.vd) < at then at = tonumber(m.vd) end
  end
  return at
end

local function modelAllowed(m, model)
  if type(m.models) ~= 'table' or #m.models == 0 then return true end
  for _, x in ipairs(m.models) do
    if x == model then return true end
  end
  return false
end

-- What a child may still take beyond its own open reservations; rolls its limit period first
-- (needs k.pi, k.ps, k.r).
local function keyFree(k, periods)
  local m = k.meta
  if m.child ~= '1' or not m.lim then return 9007199254740991 end
  if m.lr then
    local pid = periods[m.lr]
    if k.pi ~= pid then
      k.pi = pid
      k.ps = 0
    end
  end
  local f = tonumber(m.lim) - k.ps - k.r
  if f < 0 then f = 0 end
  return f
end
