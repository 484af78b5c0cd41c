--[[
  reserve-proofs-3: atomically reserve available proofs of one pool for a send/melt and write its journal entry.

  KEYS[1]  avail hash of the pool     field y -> proof JSON
  KEYS[2]  reserved hash              field y -> opId .. "\n" .. pool .. "\n" .. proof JSON
  KEYS[3]  ops hash                   field opId -> journal entry JSON
  ARGV[1]  opId
  ARGV[2]  target amount (unit)
  ARGV[3]  input fee ppk (per proof)
  ARGV[4]  journal entry JSON (inputYs / inputTotal are filled in here)
  ARGV[5]  pool name "<mint>|<unit>"

  Returns: JSON array of the reserved proofs (strings of proof JSON), or
    -1  the pool cannot cover target + fee
    -2  an entry with this opId already exists
  Selection: largest amounts first (fewest inputs, so the smallest input fee); ties by y for determinism.
]]
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return -2 end
local target = tonumber(ARGV[2])
local ppk = tonumber(ARGV[3])
local flat = redis.call('HGETALL', KEYS[1])
local items = {}
for i = 1, #flat, 2 do
  local p = cjson.decode(flat[i + 1])
  items[#items + 1] = { y = flat[i], amount = tonumber(p.amount), json = flat[i + 1] }
end
table.sort(items, function(a, b)
  if a.amount ~= b.amount then return a.amount > b.amount end
  return a.y < b.y
end)
local picked = {}
local sum = 0
local function need() return target + math.ceil(#picked * ppk / 1000) end
for _, it in ipairs(items) do
  if sum >= need() then break end
  picked[#picked + 1] = it
  sum = sum + it.amount
end
if #picked == 0 or sum < need() then return -1 end
local ys = {}
local out = {}
for _, it in ipairs(picked) do
  redis.call('HDEL', KEYS[1], it.y)
  redis.call('HSET', KEYS[2], it.y, ARGV[1] .. '\n' .. ARGV[5] .. '\n' .. it.json)
  ys[#ys + 1] = it.y
  out[#out + 1] = it.json
end
local entry = cjson.decode(ARGV[4])
entry.inputYs = ys
entry.inputTotal = sum
redis.call('HSET', KEYS[3], ARGV[1], cjson.encode(entry))
return cjson.encode(out)
