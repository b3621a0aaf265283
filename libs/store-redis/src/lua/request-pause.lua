-- requestPause: pauses a run that no live owner holds, or asks its live owner to (the lease's
-- 'pause' field, which renewals report). A pending run with no lease yet gets a paused lease of
-- epoch 0. A finished run, or one with a pending cancel (a cancel wins), is left as it is.
-- KEYS: lease, run, cancel, held, timers
-- ARGV: prefix, runId, reason ('' for none)
-- Returns 'unknown' | 'finished' | 'cancel-requested' | 'paused' | 'pause-requested'
local lease_key, run_key, cancel_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id, reason = ARGV[1], ARGV[2], ARGV[3] or ''
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return 'unknown'
end
local lease = redis.call('HMGET', lease_key, 'state', 'owner', 'exp')
local state, owner, exp = lease[1], lease[2], lease[3]
if state == 'finished' then
  return 'finished'
end
if state == 'paused' then
  return 'paused'
end
if redis.call('EXISTS', cancel_key) == 1 then
  return 'cancel-requested'
end
if reason ~= '' then
  redis.call('HSETNX', lease_key, 'pause_reason', reason)
end
local now = now_ms()
if state == 'held' and owner and tonumber(exp) > now then
  redis.call('HSET', lease_key, 'pause', '1')
  return 'pause-requested'
end
if not state then
  redis.call('HSET', lease_key, 'epoch', '0')
end
pause_lease(prefix, lease_key, held_key, timers_key, run_key, run_id, now)
return 'paused'
