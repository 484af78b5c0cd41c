--[[
  Claims the durable jobs due now (core/store/job-queue.ts: batch settlements, expired-key sweeps): each claimed
  job's due time moves to now + claimMs, so no other process claims it until the claim runs out (a process killed
  mid-job is replaced after it).

  KEYS[1] jobs (hash id -> job JSON)   KEYS[2] due (zset id -> due ms); both in the queue's one slot
  ARGV[1] now ms  ARGV[2] claim ms  ARGV[3] max jobs

  Returns {jobJson, ...}
]]
local now, claimMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    redis.call('ZADD', KEYS[2], now + claimMs, id)
    table.insert(out, raw)
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
return out
