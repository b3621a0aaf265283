-- requestCancel: sets the cancel flag (kept apart from the lease: a run may be cancelled before
-- anyone claimed it) and wakes a suspended run.
-- KEYS: lease, run, cancel, held, timers
-- ARGV: prefix, runId
-- Returns {found 0|1, wake 0|1}
local lease_key, run_key, cancel_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id = ARGV[1], ARGV[2]
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return { 0, 0 }
end
redis.call('SET', cancel_key, '1')
if redis.call('HGET', lease_key, 'state') ~= 'suspended' then
  return { 1, 0 }
end
make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now_ms())
return { 1, 1 }
