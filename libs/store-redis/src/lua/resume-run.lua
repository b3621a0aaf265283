-- resumeRun: a paused run becomes acquirable at once (held by nobody, expiring now; its record
-- 'pending'); a run with only a pause request has it withdrawn. Anything else is left alone.
-- KEYS: lease, run, held, timers
-- ARGV: prefix, runId
-- Returns 'unknown' | 'resumed' (wake) | 'withdrawn' | 'unchanged'
local lease_key, run_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, run_id = ARGV[1], ARGV[2]
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return 'unknown'
end
local lease = redis.call('HMGET', lease_key, 'state', 'pause')
if lease[1] == 'paused' then
  local now = now_ms()
  redis.call('HDEL', lease_key, 'pause_reason')
  set_run_status(prefix, run_key, run_id, 'pending', now)
  make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
  return 'resumed'
end
if lease[1] == 'held' and lease[2] then
  redis.call('HDEL', lease_key, 'pause', 'pause_reason')
  return 'withdrawn'
end
return 'unchanged'
