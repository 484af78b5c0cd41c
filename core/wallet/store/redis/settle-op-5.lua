--[[
  settle-op-5: atomically finish (or roll back) one journalled operation on one pool, only while its journal entry
  is still there (compare-and-settle: of two processes deciding the same entry, exactly one settles it).

  KEYS[1]  avail hash of the op's pool   field y -> proof JSON
  KEYS[2]  reserved hash                 field y -> opId .. "\n" .. pool .. "\n" .. proof JSON
  KEYS[3]  ops hash                      field opId -> journal entry JSON
  KEYS[4]  receipts hash                 field tokenHash -> receipt JSON
  KEYS[5]  pools set                     member "<mint>|<unit>"
  ARGV[1]  opId
  ARGV[2]  JSON array of spent Ys (removed from the pool and from reserved)
  ARGV[3]  JSON array [y1, proofJson1, y2, proofJson2, ...] of proofs to add (available)
  ARGV[4]  receipt tokenHash, or '' for none
  ARGV[5]  receipt JSON
  ARGV[6]  pool name "<mint>|<unit>"
  ARGV[7]  id of an entry to write in the same step (a send's payout record), or '' for none
  ARGV[8]  that entry's JSON
  ARGV[9]  '1': when the entry is gone, still apply the mint's facts (remove ARGV[2], add ARGV[3], store the
           receipt) but release nothing and write no next entry; '' (or absent): when gone, change nothing
  ARGV[10] '1' or '0': the entry's `submitted` as the caller read it; a stored entry that says otherwise counts
           as gone (a rollback decided on "not submitted yet" never applies once its owner has sent the request)

  With the entry there: the spent Ys are removed, the new proofs added, every proof still reserved by opId
  released back to the pool, the receipt stored, the entry deleted and the next one (if any) written.
  Returns 1 when the entry was there and is settled, 0 when it was gone.
]]
local stored = redis.call('HGET', KEYS[3], ARGV[1])
local present = false
if stored then present = (cjson.decode(stored).submitted == true) == (ARGV[10] == '1') end
if not present and ARGV[9] ~= '1' then return 0 end
for _, y in ipairs(cjson.decode(ARGV[2])) do
  redis.call('HDEL', KEYS[2], y)
  redis.call('HDEL', KEYS[1], y)
end
local add = cjson.decode(ARGV[3])
for i = 1, #add, 2 do
  redis.call('HSETNX', KEYS[1], add[i], add[i + 1])
end
if #add > 0 then redis.call('SADD', KEYS[5], ARGV[6]) end
if ARGV[4] ~= '' then redis.call('HSETNX', KEYS[4], ARGV[4], ARGV[5]) end
if not present then return 0 end
local prefix = ARGV[1] .. '\n'
local flat = redis.call('HGETALL', KEYS[2])
for i = 1, #flat, 2 do
  local v = flat[i + 1]
  if string.sub(v, 1, #prefix) == prefix then
    local rest = string.sub(v, #prefix + 1)
    local nl = string.find(rest, '\n', 1, true)
    redis.call('HSET', KEYS[1], flat[i], string.sub(rest, nl + 1))
    redis.call('HDEL', KEYS[2], flat[i])
  end
end
redis.call('HDEL', KEYS[3], ARGV[1])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[3], ARGV[7], ARGV[8]) end
return 1
