--[[
  Keys: metadata JSON in the `keys` hash (field keyHash); usage counters packed into ONE field of the
  account hash (field keyHash, value 'r,o,pi,ps,ts,tr,lu,rw,rc,tw,tc': reserved, open, period id, period
  spent, total spent, total requests, last used, requests-per-minute window and count, tokens-per-hour
  window and count). One field means a script reads a key's counters in the same HMGET as the account
  fields and writes them in the same HSET: no per-counter fields, no second hash.
]]
--- @include "num"
local KST_PATTERN =
  '^(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+)$'

-- Counters of key `kh` from its packed field value (absent or unreadable = all zero). One table constructor with
-- every field: Lua sizes it once (filling it field by field from a capture table cost 3.4 µs a call, this 2.5).
local function parseKst(kh, packed)
  local r, o, pi, ps, ts, tr, lu, rw, rc, tw, tc
  if packed then r, o, pi, ps, ts, tr, lu, rw, rc, tw, tc = string.match(packed, KST_PATTERN) end
  return {hash = kh, r = N(r), o = N(o), pi = N(pi), ps = N(ps), ts = N(ts), tr = N(tr), lu = N(lu), rw = N(rw),
    rc = N(rc), tw = N(tw), tc = N(tc)}
end

local function packKst(k)
  return string.format('%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d', k.r, k.o, k.pi, k.ps, k.ts, k.tr, k.lu, k.rw, k.rc,
    k.tw, k.tc)
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

-- Only children with a balance limit are limited by their key (and only they roll a limit period).
local function limitedChild(m)
  return m.child == '1' and m.lim ~= nil
end

-- What a key may still take beyond its own open reservations; rolls a child's limit period first.
-- Period ids are the ARGV strings (daily, weekly, monthly), converted only when needed.
local function keyFree(k, m, daily, weekly, monthly)
  if not limitedChild(m) then return 9007199254740991 end
  if m.lr then
    local pid = daily
    if m.lr == 'weekly' then pid = weekly elseif m.lr == 'monthly' then pid = monthly end
    pid = tonumber(pid)
    if k.pi ~= pid then
      k.pi = pid
      k.ps = 0
    end
  end
  local f = tonumber(m.lim) - k.ps - k.r
  if f < 0 then f = 0 end
  return f
end
