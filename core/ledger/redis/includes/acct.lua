--[[
  The account hash. Cold scripts load and save every field; the hot ones (admit, settle, release) use
  HMGET/HSET on just the fields they read or change. Besides these fields the hash holds each key's
  packed usage counters (includes/key.lua) and 'nsw', a lower bound for the next reservation expiry
  (includes/sweep.lua): admit skips the sweep query before it; whoever adds a reservation lowers it.
]]
--- @include "num"
local ACCT_FIELDS = {'balance', 'reserved', 'deposited', 'spent', 'withdrawn', 'fees', 'requests',
  'created', 'deleted', 'txseq', 'nsw'}

-- nil when the account does not exist ('created' is set once at creation).
local function loadAcct(key)
  local a, v = loadNums(key, ACCT_FIELDS)
  if not v[8] then return nil end
  return a
end

local function newAcct(now)
  return {balance = 0, reserved = 0, deposited = 0, spent = 0, withdrawn = 0, fees = 0, requests = 0,
    created = now, deleted = 0, txseq = 0, nsw = 0}
end

local function saveAcct(key, a)
  saveNums(key, a, ACCT_FIELDS)
end
