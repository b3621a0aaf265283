-- createRun: creates the run record unless its id or its idempotency key is known, in one step,
-- so concurrent creates of one run or one key produce exactly one record (create_run in the
-- prelude). A fork's first checkpoint, when given, is stored in the same step, only if the run is
-- created.
-- KEYS: run, checkpoints, summaries, and the idempotency key's key when the run has one
-- ARGV: prefix, hasKey '1'|'0', runId, workflow, version, inputJson, idempotencyKey, traceparent ('' = none),
--       checkpointJson ('' = none), summaryJson, forkedFromJson ('' = none)
-- Returns {created 0|1, the record as HGETALL pairs}
local run_key, checkpoints_key, summaries_key = KEYS[1], KEYS[2], KEYS[3]
local key_key = nil
if ARGV[2] == '1' then
  key_key = KEYS[4]
end
local created, existing = create_run(run_key, key_key, ARGV[1],
  { ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[11] })
if created == 0 then
  return { 0, existing }
end
if ARGV[9] ~= nil and ARGV[9] ~= '' then
  redis.call('RPUSH', checkpoints_key, ARGV[9])
  redis.call('RPUSH', summaries_key, ARGV[10])
end
return { 1, redis.call('HGETALL', run_key) }
