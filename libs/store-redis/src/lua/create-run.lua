-- createRun: creates the run record unless its id or its idempotency key is known, in one step,
-- so concurrent creates of one run or one key produce exactly one record.
-- A fork's first checkpoint, when given, is stored in the same step, only if the run is created.
-- KEYS: run, checkpoints, summaries, and the idempotency key's key when the run has one
-- ARGV: prefix, hasKey '1'|'0', runId, workflow, version, inputJson, idempotencyKey, traceparent ('' = none),
--       checkpointJson ('' = none), summaryJson, forkedFromJson ('' = none)
-- Returns {created 0|1, the record as HGETALL pairs}
local run_key, checkpoints_key, summaries_key, key_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, has_key = ARGV[1], ARGV[2] == '1'

if redis.call('EXISTS', run_key) == 1 then
  return { 0, redis.call('HGETALL', run_key) }
end
if has_key then
  local existing_id = redis.call('GET', key_key)
  if existing_id then
    local existing = redis.call('HGETALL', prefix .. 'run:' .. existing_id)
    if #existing > 0 then
      return { 0, existing }
    end
  end
end

local now = ms(now_ms())
redis.call('HSET', run_key, 'runId', ARGV[3], 'workflow', ARGV[4], 'version', ARGV[5], 'input', ARGV[6],
  'status', 'pending', 'createdAt', now, 'updatedAt', now, 'attempts', 0)
if ARGV[8] ~= nil and ARGV[8] ~= '' then
  redis.call('HSET', run_key, 'traceparent', ARGV[8])
end
if has_key then
  redis.call('HSET', run_key, 'idempotencyKey', ARGV[7])
  redis.call('SET', key_key, ARGV[3])
end
if ARGV[11] ~= nil and ARGV[11] ~= '' then
  redis.call('HSET', run_key, 'forkedFrom', ARGV[11])
end
if ARGV[9] ~= nil and ARGV[9] ~= '' then
  redis.call('RPUSH', checkpoints_key, ARGV[9])
  redis.call('RPUSH', summaries_key, ARGV[10])
end
return { 1, redis.call('HGETALL', run_key) }
