-- requestCancel: sets the cancel flag (kept apart from the lease: a run may be cancelled before
-- anyone claimed it), withdraws any pause request (a cancel wins) and wakes a suspended or paused
-- run.
-- KEYS: lease, run, cancel, held, timers
-- ARGV: prefix, runId, reason ('' for none)
-- The flag's value is '1', or '1|<reason>': the first request's reason is kept (NX).
-- Returns {found 0|1, wake 0|1}
local lease_key, run_key, cancel_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id, reason = ARGV[1], ARGV[2], ARGV[3] or ''
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return { 0, 0 }
end
if reason == '' then
  redis.call('SET', cancel_key, '1', 'NX')
else
  redis.call('SET', cancel_key, '1|' .. reason, 'NX')
end
redis.call('HDEL', lease_key, 'pause', 'pause_reason')
local state = redis.call('HGET', lease_key, 'state')
if state ~= 'suspended' and state ~= 'paused' then
  return { 1, 0 }
end
local now = now_ms()
if state == 'paused' then
  set_run_status(prefix, run_key, run_id, 'pending', now)
end
make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
return { 1, 1 }
