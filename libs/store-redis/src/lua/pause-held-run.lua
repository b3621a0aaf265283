-- pauseHeldRun: the owner's fenced write that pauses the run it holds (it stopped for a pause
-- request). A pending cancel wins, and a request withdrawn meanwhile (resumeRun) stands: nothing
-- changes in either case.
-- KEYS: lease, run, cancel, held, timers
-- ARGV: prefix, runId, epoch
-- Returns 'paused' | 'cancel-requested' | 'not-requested' | 'fenced'
local lease_key, run_key, cancel_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id, epoch = ARGV[1], ARGV[2], ARGV[3]
local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if lease[1] ~= 'held' or lease[2] ~= epoch then
  return 'fenced'
end
if redis.call('EXISTS', cancel_key) == 1 then
  return 'cancel-requested'
end
if not redis.call('HGET', lease_key, 'pause') then
  return 'not-requested'
end
pause_lease(prefix, lease_key, held_key, timers_key, run_key, run_id, now_ms())
return 'paused'
