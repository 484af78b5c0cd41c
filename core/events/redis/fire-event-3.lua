-- One event of a key that needs no decision (batch.completed): enqueues one delivery to every webhook of the
-- account subscribed to it (the key's own and its parent's, and the key's alert target). The delivery ids are
-- `<event id>:<webhook id>`: firing the same event id again (a settlement replayed after a crash) replaces the
-- pending delivery instead of adding a second one.
-- KEYS[1] hooks  KEYS[2] out  KEYS[3] due
-- ARGV[1] accountId  ARGV[2] keyId  ARGV[3] parentKeyId ('' = none)  ARGV[4] event type  ARGV[5] data JSON
-- ARGV[6] now ms  ARGV[7] now ISO  ARGV[8] event id
-- Returns: the number of deliveries enqueued.
--- @include "fire"
return fire(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], cjson.decode(ARGV[5]),
  tonumber(ARGV[6]), ARGV[7], ARGV[8])
