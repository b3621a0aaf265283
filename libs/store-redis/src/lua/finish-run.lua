-- finishRun: under the fence, records the outcome, keeps the final checkpoint (if any) and
-- marks the lease 'finished' so it is never acquired again; removes the timer. One step, so no
-- reader sees a finished run without its outcome or an outcome on a run still acquirable.
-- A run in the index enters the finished index (by finish time), which retention reads.
-- KEYS: lease, run, held, timers, checkpoints, summaries, finished
-- ARGV: prefix, runId, epoch, status, outcomeField ('result' | 'error'), outcomeValue,
--       checkpointJson ('' for none), summaryJson
-- Returns 'ok' | 'fenced'
local lease_key, run_key, held_key, timers_key, checkpoints_key, summaries_key, finished_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local prefix, run_id, epoch, status, field, value, checkpoint, summary =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]

local lease = redis.call('HMGET', lease_key, 'state', 'epoch', 'owner')
if not lease[1] or lease[1] == 'finished' or lease[2] ~= epoch then
  return 'fenced'
end
local now = now_ms()
if redis.call('EXISTS', run_key) == 1 then
  index_status(prefix, run_key, run_id, status)
  redis.call('HSET', run_key, 'status', status, field, value, 'updatedAt', ms(now))
  redis.call('ZADD', finished_key, ms(now), run_id)
end
if checkpoint ~= '' then
  redis.call('RPUSH', checkpoints_key, checkpoint)
  redis.call('RPUSH', summaries_key, summary)
end
if lease[3] then
  redis.call('SREM', owner_key(prefix, lease[3]), run_id)
end
-- A pause asked of a run that finished before it stopped for it is moot.
redis.call('HDEL', lease_key, 'pause', 'pause_reason')
redis.call('HSET', lease_key, 'state', 'finished')
redis.call('HDEL', lease_key, 'owner', 'exp', 'wait')
redis.call('ZREM', held_key, run_id)
redis.call('ZREM', timers_key, run_id)
return 'ok'
