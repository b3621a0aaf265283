-- acquireLease: takes the run's lease with epoch = previous + 1 until now + ttl (take_lease in the
-- prelude).
-- KEYS: lease, held, timers, run, cancel
-- ARGV: prefix, runId, owner, ttlMs
-- Returns {'ok', epoch, cancelRequested 0|1} | {'held', owner, exp} | {'finished'} | {'paused'}
return take_lease(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]))
