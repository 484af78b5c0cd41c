--[[
  move-op-1: move a journal entry to another id, only while it is still there (atomic against a concurrent
  delete of it: of the two, one wins).

  KEYS[1]  ops hash   field entry id -> entry JSON
  ARGV[1]  the id it is under now
  ARGV[2]  the id to move it to
  ARGV[3]  the entry's JSON under its new id
  Returns 1 when moved, 0 when the entry was not there (nothing changed).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1
