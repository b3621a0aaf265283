-- continueRun: under the fence, marks a run as continuing as new as its successor (the run
-- record's 'continuedAs' field), the first successor named kept. From then on deliver-signal,
-- request-update and complete-promise keep nothing for the run and answer with the successor
-- (contracts/run-index.ts in @baton/core, runs.continueAs). A run with no record keeps no mark.
-- KEYS: lease, run
-- ARGV: epoch, successorRunId
-- Returns 'ok' | 'fenced'
local lease_key, run_key = KEYS[1], KEYS[2]
local epoch, successor = ARGV[1], ARGV[2]

local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if not lease[1] or lease[1] == 'finished' or lease[2] ~= epoch then
  return 'fenced'
end
if redis.call('EXISTS', run_key) == 1 and redis.call('HSETNX', run_key, 'continuedAs', successor) == 1 then
  redis.call('HSET', run_key, 'updatedAt', ms(now_ms()))
end
return 'ok'
