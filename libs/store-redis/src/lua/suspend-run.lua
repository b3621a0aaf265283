-- suspendRun: unless a awaited signal is already in the inbox or a cancel is pending, gives up
-- the lease, marks lease and run 'suspended' and registers the timer. The inbox check and the
-- suspension are one step, so a signal delivered concurrently either is seen here or sees the
-- suspended lease and wakes it: never neither.
-- KEYS: lease, held, timers, run, cancel, signal names (hash signalId -> name)
-- ARGV: prefix, runId, epoch, wakeAt ('' for none), waitJson, signalCount,
--       signal names (signalCount of them), consumed signal ids (the rest)
-- A pause requested meanwhile pauses the run instead (no timer).
-- Returns 'ok' | 'paused' | 'fenced' | 'signal-pending' | 'cancel-requested'
local lease_key, held_key, timers_key, run_key, cancel_key, names_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local prefix, run_id, epoch, wake_at, wait_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local signal_count = tonumber(ARGV[6])

local lease = redis.call('HMGET', lease_key, 'state', 'epoch', 'owner')
if lease[1] ~= 'held' or lease[2] ~= epoch then
  return 'fenced'
end

local awaited, consumed = {}, {}
for i = 7, 6 + signal_count do
  awaited[ARGV[i]] = true
end
for i = 7 + signal_count, #ARGV do
  consumed[ARGV[i]] = true
end
local inbox = redis.call('HGETALL', names_key)
for i = 1, #inbox, 2 do
  if awaited[inbox[i + 1]] and not consumed[inbox[i]] then
    return 'signal-pending'
  end
end
if redis.call('EXISTS', cancel_key) == 1 then
  return 'cancel-requested'
end
if redis.call('HGET', lease_key, 'pause') then
  pause_lease(prefix, lease_key, held_key, timers_key, run_key, run_id, now_ms())
  return 'paused'
end

if lease[3] then
  redis.call('SREM', owner_key(prefix, lease[3]), run_id)
end
redis.call('HSET', lease_key, 'state', 'suspended', 'wait', wait_json)
redis.call('HDEL', lease_key, 'owner', 'exp')
redis.call('ZREM', held_key, run_id)
if wake_at == '' then
  redis.call('ZREM', timers_key, run_id)
else
  redis.call('ZADD', timers_key, wake_at, run_id)
end
set_run_status(prefix, run_key, run_id, 'suspended', now_ms())
return 'ok'
