-- expiredRuns: finished runs whose finish is at least olderThanMs ago on the server's clock,
-- oldest first. Read-only; a script only for the server's clock.
-- KEYS: finished
-- ARGV: olderThanMs, limit
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms(now_ms() - tonumber(ARGV[1])), 'LIMIT', 0, tonumber(ARGV[2]))
