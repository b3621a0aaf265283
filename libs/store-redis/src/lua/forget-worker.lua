-- forgetWorker: removes a worker's report (graceful stop).
-- KEYS: fleet-reports, fleet-expiry, fleet-keep
-- ARGV: workerId
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
