-- createRunAndLease: createRun and, only when that created the run, acquireLease for the worker,
-- in one step: what a worker does with a start message, in one round trip instead of two.
-- KEYS: run, lease, held, timers, cancel, and the idempotency key's key when the run has one
-- ARGV: prefix, hasKey '1'|'0', runId, workflow, version, inputJson, idempotencyKey, traceparent ('' = none),
--       owner, ttlMs
-- Returns {0, existing record as HGETALL pairs} | {1, record after the lease, lease reply (see take_lease)}
local run_key = KEYS[1]
local key_key = nil
if ARGV[2] == '1' then
  key_key = KEYS[6]
end
local created, existing = create_run(run_key, key_key, ARGV[1],
  { ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], '' })
if created == 0 then
  return { 0, existing }
end
local lease = take_lease(KEYS[2], KEYS[3], KEYS[4], run_key, KEYS[5], ARGV[1], ARGV[3], ARGV[9], tonumber(ARGV[10]))
return { 1, redis.call('HGETALL', run_key), lease }
