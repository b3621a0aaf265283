-- requestCancel: sets the cancel flag (kept apart from the lease: a run may be cancelled before
-- anyone claimed it), withdraws any pause request (a cancel wins) and wakes a suspended or paused
-- run. Too late, and nothing changes, for a finished run or one whose owner closed its cancels
-- under the current epoch (op_close_cancels in prelude.lua). A held run's owner is told on its cancels channel
-- (watchCancels); a user without the grant to publish is told at its next renewal instead.
-- KEYS: lease, run, cancel, held, timers
-- ARGV: prefix, runId, reason ('' for none)
-- The flag's value is '1', or '1|<reason>': the first request's reason is kept (NX).
-- Returns {found 0|1, wake 0|1, tooLate 0|1}
local lease_key, run_key, cancel_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id, reason = ARGV[1], ARGV[2], ARGV[3] or ''
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return { 0, 0, 0 }
end
local lease = redis.call('HMGET', lease_key, 'state', 'epoch', 'owner', 'closed')
local state, epoch, owner, closed = lease[1], lease[2], lease[3], lease[4]
if state == 'finished' or (state == 'held' and closed and closed == epoch) then
  return { 1, 0, 1 }
end
local status = redis.call('HGET', run_key, 'status')
if status == 'completed' or status == 'failed' or status == 'cancelled' then
  return { 1, 0, 1 }
end
if reason == '' then
  redis.call('SET', cancel_key, '1', 'NX')
else
  redis.call('SET', cancel_key, '1|' .. reason, 'NX')
end
redis.call('HDEL', lease_key, 'pause', 'pause_reason')
if state == 'held' and owner and owner ~= '' then
  redis.pcall('PUBLISH', prefix .. 'cancels:' .. owner, run_id)
end
if state ~= 'suspended' and state ~= 'paused' then
  return { 1, 0, 0 }
end
local now = now_ms()
if state == 'paused' then
  set_run_status(prefix, run_key, run_id, 'pending', now)
end
make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
return { 1, 1, 0 }
