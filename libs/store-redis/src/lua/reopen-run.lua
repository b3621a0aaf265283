-- reopenRun: redrive of a failed run. Only while the run is 'failed' and its lease 'finished' at
-- the given epoch: keeps the checkpoint to resume from, sets the run 'pending' (error cleared)
-- and makes the lease acquirable (held by nobody, expiring now, in the reaper's queue). One step,
-- so of concurrent redrives exactly one reopens.
-- The run leaves the finished index, so retention no longer sees it.
-- KEYS: lease, run, held, timers, checkpoints, summaries, finished
-- ARGV: prefix, runId, epoch, checkpointJson, summaryJson
-- Returns {1} when reopened, {0, status or ''} otherwise
local lease_key, run_key, held_key, timers_key, checkpoints_key, summaries_key, finished_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local prefix, run_id, epoch, checkpoint, summary = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local status = redis.call('HGET', run_key, 'status')
local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if status ~= 'failed' or lease[1] ~= 'finished' or lease[2] ~= epoch then
  return { 0, status or '' }
end
local now = now_ms()
redis.call('RPUSH', checkpoints_key, checkpoint)
redis.call('RPUSH', summaries_key, summary)
index_status(prefix, run_key, run_id, 'pending')
redis.call('HSET', run_key, 'status', 'pending', 'updatedAt', ms(now))
redis.call('HDEL', run_key, 'error')
redis.call('ZREM', finished_key, run_id)
-- A redriven run gets its full count of resume attempts again (record-claim-failure.lua).
redis.call('HDEL', lease_key, 'failEpoch', 'failCount')
make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
return { 1 }
