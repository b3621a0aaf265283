-- reportWorker: a worker's latest report, stamped with the server clock.
-- KEYS: fleet-reports (HASH workerId -> '<lastSeenAt>|<report JSON>'),
--       fleet-expiry (ZSET workerId -> expiresAt)
-- ARGV: workerId, report JSON (checked by the caller), ttlMs
local now = now_ms()
redis.call('HSET', KEYS[1], ARGV[1], ms(now) .. '|' .. ARGV[2])
redis.call('ZADD', KEYS[2], ms(now + tonumber(ARGV[3])), ARGV[1])
return now
