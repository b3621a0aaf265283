-- requestUpdate: adds an update request to the run's pending list once per update id, answers the
-- kept outcome of an id settled before, keeps nothing for a finished run, and makes a suspended
-- run acquirable (contracts/updates.ts in @baton/core).
-- KEYS: lease, run, pending (hash updateId -> '<requestedAt>|<recordJson>'), order (list of
--       pending ids, oldest first), kept (hash updateId -> '<settledAt>|<recordJson>'), held, timers
-- ARGV: prefix, runId, updateId, recordJson ({"name","args"}: never decoded here, as cjson would
--       round numbers)
-- Returns {found 0|1, wake 0|1, finished 0|1, kept?, continuedAs?}: kept is '' when a run that
-- continued as new (continue-run.lua) answers with its successor instead, keeping nothing.
local lease_key, run_key, pending_key, order_key, kept_key, held_key, timers_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local prefix, run_id, update_id, record = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', run_key) == 0 then
  return { 0, 0, 0 }
end
local kept = redis.call('HGET', kept_key, update_id)
if kept then
  return { 1, 0, 0, kept }
end
local state = redis.call('HGET', lease_key, 'state')
local successor = redis.call('HGET', run_key, 'continuedAs')
if successor then
  return { 1, 0, state == 'finished' and 1 or 0, '', successor }
end
if state == 'finished' then
  return { 1, 0, 1 }
end
local now = now_ms()
if redis.call('HSETNX', pending_key, update_id, ms(now) .. '|' .. record) == 1 then
  redis.call('RPUSH', order_key, update_id)
end
if state == 'suspended' then
  make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
  return { 1, 1, 0 }
end
return { 1, 0, 0 }
