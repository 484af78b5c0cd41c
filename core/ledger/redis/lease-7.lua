--[[
  One credit-lease step (docs/ledger.md, "Credit leases"), atomic: records the calls spent in memory from the
  lease since the previous step, then opens, renews (new expiry), resizes or closes the lease. The lease is a
  reservation record of kind 'call' (it counts in 'reserved', and with its c concurrency slots in the key's
  open count; the sweep and release-orphans release it like any call), with extra fields: rw/rs
  (requests-per-minute window and slots granted in it), c (concurrency slots held; absent = 1), b (last
  applied step seq) and q (that step's answer, for replays).

  KEYS[1] acct  KEYS[2] keys  KEYS[3] res  KEYS[4] expiry  KEYS[5] fin  KEYS[6] tx  KEYS[7] audit-log
  ARGV[1] keyHash  [2] leaseId  [3] seq  [4] wantMsat  [5] minMsat  [6] wantRequests  [7] usedRequests
  [8] ttlMs  [9] requests/min  [10] tokens/hour  [11] concurrent  [12] now  [13] accountId
  [14] tx retention  [15] audit records before this go (ms)  [16] forget finished before (ms)  [17] sweep limit
  [18] close '1'|'0'  [19] concurrency slots wanted  [20] calls open under the lease (the floor of the slots)
  [21] number of calls, then 7 per call: costMsat, tokens, model, description, estimated '1'|'0',
  the audit record without its cost (JSON; '' = none), settled at (ms). Each call's charge, transaction and
  audit record are written in this step, so the report carries the records of the calls it charges.

  Returns {1, replay 0|1, answer, keyMetaJson}, answer = 'open,granted,available,balance,slots,window,counted,
  tokensLeft,otherOpen,concurrentSlots|charged;charged;…' | {-1} invalid key (opening) | {-2, expiredAt} (opening)
  | {-18} lease unsupported (limited child) | {-5, free, min, shortfall} (opening)
  | {-4, limitType, limit, remaining, resetUnix} (opening) | {-6} id already in use (leaseId
  names another kind of record or another key's) | {-19} key disabled (opening; an open lease of a disabled
  key is closed by its next step, its calls reported)
]]
--- @include "num"
--- @include "key"
--- @include "history"
--- @include "finish"
--- @include "sweep"

local kh, id = ARGV[1], ARGV[2]
local now = tonumber(ARGV[12])
local v = redis.call('HMGET', KEYS[1], 'balance', 'reserved', 'spent', 'requests', 'txseq', 'created', 'deleted',
  'nsw', kh, 'disabled')
if not v[6] then return {-1} end
local a = {balance = N(v[1]), reserved = N(v[2]), spent = N(v[3]), requests = N(v[4]), txseq = N(v[5])}
local nsw = N(v[8])
local k = parseKst(kh, v[9])
-- Expired reservations first (this lease included, if it ran out): what they held is free again. Written at once,
-- so every early return below leaves the sweep applied.
if now >= nsw then
  sweep(a, KEYS[1], KEYS[3], KEYS[4], KEYS[5], now, tonumber(ARGV[17]), k)
  nsw = nextSweep(KEYS[4])
  redis.call('HSET', KEYS[1], 'reserved', S(a.reserved), kh, packKst(k), 'nsw', S(nsw))
end

local raw = redis.call('HGET', KEYS[3], id)
local r = nil
if raw then
  r = cjson.decode(raw)
  if r.k ~= 'call' or r.h ~= kh then return {-6} end
  if r.b and tonumber(ARGV[3]) <= tonumber(r.b) then
    return {1, 1, r.q, redis.call('HGET', KEYS[2], kh) or ''}
  end
end
local ncalls = tonumber(ARGV[21])
local mraw = redis.call('HGET', KEYS[2], kh)
local m = nil
if mraw then m = cjson.decode(mraw) end
local bad = (not m) or m.del == '1' or v[7] == '1'
local off = (not bad) and (m.dis == '1' or v[10] == '1')
local exp = nil
if not bad then exp = expiredAt(m, now) end

local rw = math.floor(now / 60000)
local tw = math.floor(now / 3600000)
local rpm, tph, conc = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
if not r and ncalls == 0 then
  -- Opening: the admit checks, then the slice.
  if bad then return {-1} end
  if off then return {-19} end
  if exp then return {-2, exp} end
  if limitedChild(m) then return {-18} end
  local rc = 0
  if k.rw == rw then rc = k.rc end
  if rc >= rpm then return {-4, 1, rpm, 0, (rw + 1) * 60} end
  local tc = 0
  if k.tw == tw then tc = k.tc end
  if tc >= tph then return {-4, 2, tph, 0, (tw + 1) * 3600} end
  if k.o >= conc then return {-4, 3, conc, 0, math.ceil(now / 1000)} end
  local free = a.balance - a.reserved
  if free < 0 then free = 0 end
  local min = tonumber(ARGV[5])
  if math.min(tonumber(ARGV[4]), free) < min then return {-5, free, min, min - free} end
end

local isOpen = r ~= nil and r.s == 'open'
local held, heldC = 0, 0
if isOpen then
  held = tonumber(r.a)
  heldC = tonumber(r.c or '1')
end
local free = a.balance - a.reserved
if free < 0 then free = 0 end

-- The calls, in order, each charged like settle: from the lease first, then from what is free.
local charged = {}
-- Their transactions and audit records, written together after the loop (includes/history.lua).
local txs, audits = {}, {}
local i = 22
for n = 1, ncalls do
  local cost = tonumber(ARGV[i])
  local charge = math.min(cost, held + free)
  local fromHeld = math.min(charge, held)
  held = held - fromHeld
  free = free - (charge - fromHeld)
  a.reserved = a.reserved - fromHeld
  a.balance = a.balance - charge
  a.spent = a.spent + charge
  a.requests = a.requests + 1
  k.r = k.r - fromHeld
  k.ts = k.ts + charge
  k.tr = k.tr + 1
  k.ps = k.ps + charge
  local at = ARGV[i + 6]
  k.lu = tonumber(at)
  local ctw = math.floor(k.lu / 3600000)
  if k.tw ~= ctw then
    k.tw = ctw
    k.tc = 0
  end
  k.tc = k.tc + tonumber(ARGV[i + 1])
  local _, tx = txRecord(a, ARGV[13], 'usage', -charge, ARGV[i + 3], at, kh, ARGV[i + 2], ARGV[i + 4])
  txs[n] = tx
  if ARGV[i + 5] ~= '' then audits[#audits + 1] = auditRecord(ARGV[i + 5], charge) end
  charged[n] = S(charge)
  i = i + 7
end
pushTrimMany(KEYS[6], txs, tonumber(ARGV[14]))
addAudits(KEYS[7], audits, ARGV[15])

local close = ARGV[18] == '1' or bad or off or exp ~= nil or (r ~= nil and not isOpen) or (r == nil and ncalls > 0)
local grant, slots, conslots = 0, 0, 0
if k.rw ~= rw then
  k.rw = rw
  k.rc = 0
end
-- Slots granted in this same minute and not used go back.
if isOpen and tonumber(r.rw) == rw then
  local unused = tonumber(r.rs) - tonumber(ARGV[7])
  if unused > 0 then k.rc = math.max(0, k.rc - unused) end
end
if close then
  if isOpen then
    a.reserved = a.reserved - held
    k.r = k.r - held
    k.o = k.o - heldC
  end
  if not r then r = {k = 'call', h = kh, a = '0'} end
else
  grant = math.min(tonumber(ARGV[4]), held + free)
  a.reserved = a.reserved + grant - held
  k.r = k.r + grant - held
  slots = math.max(0, math.min(tonumber(ARGV[6]), rpm - k.rc))
  k.rc = k.rc + slots
  -- Concurrency slots: what is wanted within what the key's other open calls leave, never below the calls
  -- open under the lease.
  local others = k.o - heldC
  conslots = math.max(tonumber(ARGV[20]), math.min(tonumber(ARGV[19]), conc - others), 0)
  k.o = others + conslots
  if not r then r = {k = 'call', h = kh} end
  r.c = S(conslots)
  r.s = 'open'
  r.a = S(grant)
  r.e = S(now + tonumber(ARGV[8]))
  r.rw = S(rw)
  r.rs = S(slots)
end
k.lu = math.max(k.lu, now)
local tc = 0
if k.tw == tw then tc = k.tc end
local otherOpen = k.o - conslots
local avail = a.balance - a.reserved
if avail < 0 then avail = 0 end
local open = '1'
if close then open = '0' end
r.b = ARGV[3]
r.q = open .. ',' .. S(grant) .. ',' .. S(avail) .. ',' .. S(a.balance) .. ',' .. S(slots) .. ',' .. S(rw) .. ','
  .. S(k.rc) .. ',' .. S(math.max(0, tph - tc)) .. ',' .. S(otherOpen) .. ',' .. S(conslots) .. '|'
  .. table.concat(charged, ';')
if close then
  local status = 'released'
  if r.s == 'expired' then status = 'expired' end
  finish(KEYS[3], KEYS[5], KEYS[4], id, r, status, ARGV[12], ARGV[16])
else
  redis.call('HSET', KEYS[3], id, cjson.encode(r))
  redis.call('ZADD', KEYS[4], r.e, id)
  if tonumber(r.e) < nsw then nsw = tonumber(r.e) end
end
redis.call('HSET', KEYS[1], 'balance', S(a.balance), 'reserved', S(a.reserved), 'spent', S(a.spent),
  'requests', S(a.requests), 'txseq', S(a.txseq), 'nsw', S(nsw), kh, packKst(k))
return {1, 0, r.q, mraw or ''}
