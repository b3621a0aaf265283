-- deleteRun: only while the run is finished (its record completed, failed or cancelled, its lease
-- 'finished'), removes everything the store keeps of it in one step, so a run reopened or still
-- going is never touched. The idempotency key goes only while it still names this run.
-- The run's large payloads go with it; for an unknown run they go too (a start message's input
-- may have been stored before any worker created the run), for an unfinished one never.
-- KEYS: lease, run, cancel, checkpoints, summaries, inbox, signal ids, held, timers, finished,
--       payloads, journal pointers
-- ARGV: prefix, runId
-- Returns {1} deleted, {0} unknown, {-1, status} not finished
local lease_key, run_key, cancel_key, checkpoints_key, summaries_key, inbox_key, signal_ids_key,
  held_key, timers_key, finished_key, payloads_key, pointers_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local prefix, run_id = ARGV[1], ARGV[2]

local run = redis.call('HMGET', run_key, 'status', 'idempotencyKey')
local lease_state = redis.call('HGET', lease_key, 'state')
if not run[1] and not lease_state then
  redis.call('DEL', payloads_key)
  return { 0 }
end
if run[1] and run[1] ~= 'completed' and run[1] ~= 'failed' and run[1] ~= 'cancelled' then
  return { -1, run[1] }
end
if lease_state and lease_state ~= 'finished' then
  if lease_state == 'held' then
    return { -1, 'running' }
  end
  return { -1, lease_state }
end
drop_run(prefix, run_id, run[2], { lease_key, run_key, cancel_key, checkpoints_key, summaries_key, inbox_key,
  signal_ids_key, payloads_key, pointers_key }, held_key, timers_key, finished_key)
return { 1 }
