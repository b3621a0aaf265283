-- writeCheckpoint: appends a checkpoint to the run's history only while its epoch is the
-- lease's epoch and the run is not finished (the fence against zombie writers).
-- KEYS: lease, checkpoints (list of full JSON), summaries (list of summary JSON)
-- ARGV: epoch, checkpointJson, summaryJson
-- Returns 'ok' | 'fenced'
local lease = redis.call('HMGET', KEYS[1], 'state', 'epoch')
if not lease[1] or lease[1] == 'finished' or lease[2] ~= ARGV[1] then
  return 'fenced'
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 'ok'
