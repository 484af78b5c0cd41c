--[[
  Number helpers. Lua numbers are doubles: amounts stay exact below 2^53 (the TS side refuses larger
  ones). Integers are written with %d (a C long on 64-bit): exact, and much cheaper than %.0f, which goes
  through glibc's floating-point printer. Numbers inside JSON records are strings for the same reason.
]]
local function N(v)
  if not v then return 0 end
  return tonumber(v) or 0
end

local function S(n)
  return string.format('%d', n)
end

-- A number as its decimal string; a string (an ARGV value, already decimal) as it is.
local function Sx(v)
  if type(v) == 'string' then return v end
  return S(v)
end

-- HMGET `fields` of `key` into a table of numbers (absent = 0); raw values are returned too.
local function loadNums(key, fields)
  local v = redis.call('HMGET', key, unpack(fields))
  local t = {}
  for i = 1, #fields do t[fields[i]] = N(v[i]) end
  return t, v
end

-- HSET only `fields` of `t` (one call): a script writes back just what it may have changed.
local function saveNums(key, t, fields)
  local args = {}
  for i = 1, #fields do
    args[2 * i - 1] = fields[i]
    args[2 * i] = S(t[fields[i]])
  end
  redis.call('HSET', key, unpack(args))
end
