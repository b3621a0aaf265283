-- createPromise: records a pending durable promise (contracts/promises.ts in @baton/core), once
-- per token: a second call changes nothing (the owner writes it again after a crash).
-- KEYS: promise:<token> (HASH), run-promises:<runId> (ZSET token -> seq)
-- ARGV: runId, seq, timeoutAt ('' for none), schemaJson ('' for none), token
-- Hash fields: run, seq, state ('pending' | 'resolved' | 'rejected' | 'timed-out'), created,
-- timeout (absent for none), schema (JSON, absent for none), then, once completed: completed and,
-- for a completion, payload (JSON Lua never decodes).
-- Returns 1 when recorded, 0 when the token was known.
local promise_key, run_promises_key = KEYS[1], KEYS[2]
local run_id, seq, timeout_at, schema = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', promise_key) == 1 then
  return 0
end
redis.call('HSET', promise_key, 'run', run_id, 'seq', seq, 'state', 'pending', 'created', ms(now_ms()))
if timeout_at ~= '' then
  redis.call('HSET', promise_key, 'timeout', timeout_at)
end
if schema ~= '' then
  redis.call('HSET', promise_key, 'schema', schema)
end
redis.call('ZADD', run_promises_key, seq, ARGV[5])
return 1
