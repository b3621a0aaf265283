-- completePromise: completes a pending durable promise once and, in the same step, adds the
-- completion to its run's inbox exactly as deliver-signal.lua adds a signal (name 'baton.promise',
-- id 'baton.promise:<seq>', the payload as given), waking the run when it is suspended waiting for
-- that name (contracts/promises.ts in @baton/core).
-- KEYS: promise:<token>, held, timers
-- ARGV: prefix, state ('resolved' | 'rejected'), payloadJson
-- The run's keys are built from the prefix and the record's run id (known only here).
-- Returns {0} unknown token; {1, 0, 0} not pending (nothing changed); {1, 0, 1} its run has
-- finished (nothing changed); {1, 0, 1, successor} its run has continued as new (continue-run.lua;
-- nothing changed); {1, 1, wake 0|1, runId} completed.
local promise_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3]
local prefix, state, payload = ARGV[1], ARGV[2], ARGV[3]
local record = redis.call('HMGET', promise_key, 'run', 'seq', 'state')
local run_id, seq = record[1], record[2]
if not run_id then
  return { 0 }
end
if record[3] ~= 'pending' then
  return { 1, 0, 0 }
end
local lease_key = prefix .. 'lease:' .. run_id
local successor = redis.call('HGET', prefix .. 'run:' .. run_id, 'continuedAs')
if successor then
  return { 1, 0, 1, successor }
end
if redis.call('HGET', lease_key, 'state') == 'finished' then
  return { 1, 0, 1 }
end
local now = now_ms()
redis.call('HSET', promise_key, 'state', state, 'completed', ms(now), 'payload', payload)

local signal_id, name = 'baton.promise:' .. seq, 'baton.promise'
if redis.call('HSETNX', prefix .. 'signal-ids:' .. run_id, signal_id, name) == 1 then
  local entry = '{"signalId":"' .. signal_id .. '","name":"' .. name .. '","payload":' .. payload .. '}'
  redis.call('RPUSH', prefix .. 'inbox:' .. run_id, ms(now) .. '|' .. entry)
end
local lease = redis.call('HMGET', lease_key, 'state', 'wait')
if lease[1] == 'suspended' and lease[2] then
  for _, awaited in ipairs(cjson.decode(lease[2])) do
    if awaited == name then
      make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
      return { 1, 1, 1, run_id }
    end
  end
end
return { 1, 1, 0, run_id }
