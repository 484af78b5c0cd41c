--[[
  update-op-1: rewrite a journal entry only while it is still there (atomic against a settle or delete of it: an
  entry another process decided is never brought back by its first writer's later update).

  KEYS[1]  ops hash   field entry id -> entry JSON
  ARGV[1]  the entry's id
  ARGV[2]  its new JSON
  Returns 1 when rewritten, 0 when the entry was not there (nothing changed).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
