-- reportWorker: a worker's latest report, stamped with the server clock, and how long it is kept
-- as a departed worker once it expires; a report removes the worker's departed record (it is back).
-- KEYS: fleet-reports (HASH workerId -> '<lastSeenAt>|<report JSON>'),
--       fleet-expiry (ZSET workerId -> expiresAt), fleet-keep (HASH workerId -> keepMs),
--       fleet-departed, fleet-departed-until (see list-workers.lua)
-- ARGV: workerId, report JSON (checked by the caller), ttlMs, keepDepartedMs
local now = now_ms()
redis.call('HSET', KEYS[1], ARGV[1], ms(now) .. '|' .. ARGV[2])
redis.call('ZADD', KEYS[2], ms(now + tonumber(ARGV[3])), ARGV[1])
if tonumber(ARGV[4]) > 0 then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
else
  redis.call('HDEL', KEYS[3], ARGV[1])
end
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
return now
