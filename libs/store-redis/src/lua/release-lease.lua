-- releaseLease: hands the run off (held by nobody, expiring now). Nothing changes under a stale
-- epoch or when the lease is not held.
-- KEYS: lease, held, timers
-- ARGV: prefix, runId, epoch
-- Returns 1 when released, 0 otherwise.
local lease_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3]
local prefix, run_id, epoch = ARGV[1], ARGV[2], ARGV[3]
local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if lease[1] ~= 'held' or lease[2] ~= epoch then
  return 0
end
make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now_ms())
return 1
