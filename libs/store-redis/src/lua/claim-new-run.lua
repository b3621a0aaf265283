-- createRunAndLease: createRun and, only when that created the run, acquireLease for the worker,
-- in one step: what a worker does with a start message, in one round trip instead of two.
-- KEYS: run, lease, held, timers, cancel, and the idempotency key's key when the run has one
-- ARGV: prefix, hasKey '1'|'0', runId, workflow, version, inputJson, idempotencyKey, traceparent ('' = none),
--       owner, ttlMs
-- Returns {0, existing record as HGETALL pairs} | {1, record after the lease, lease reply (see take_lease)}
-- The body is op_claim_new_run in prelude.lua, which batch.lua runs too.
return op_claim_new_run(KEYS, ARGV)
