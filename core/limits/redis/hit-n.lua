--[[
  hit-n: count one request of a subject in each of its fixed windows, unless one is already full.

  KEYS[i]               one counter per window (all hash-tagged by scope and subject: one slot)
  ARGV[1]               add: 1 counts the request, 0 only reads
  ARGV[1 + i]           expiry in seconds of KEYS[i] (set when the counter is created)
  ARGV[1 + #KEYS + i]   limit of KEYS[i]

  Returns { over, count_1, ..., count_n }: over = 1 when a window was already full (then nothing was counted),
  count_i = KEYS[i]'s count after this call.
]]
local add = tonumber(ARGV[1])
local n = #KEYS
local out = {}
local over = false
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  out[i] = c
  if c >= tonumber(ARGV[1 + n + i]) then over = true end
end
if add == 1 and not over then
  for i = 1, n do
    out[i] = redis.call('INCR', KEYS[i])
    if out[i] == 1 then redis.call('EXPIRE', KEYS[i], tonumber(ARGV[1 + i])) end
  end
end
table.insert(out, 1, over and 1 or 0)
return out
