-- deliverSignal: appends a signal to the run's inbox once per signalId and wakes the run when
-- it is suspended waiting for that name.
-- KEYS: lease, run, signal names (hash signalId -> name), inbox (list), held, timers
-- ARGV: prefix, runId, signalId, name, entryJson
-- Inbox entries are '<receivedAt>|<entryJson>': the time comes from the server clock here,
-- and the payload is never decoded by Lua (cjson would round numbers).
-- Returns {found 0|1, wake 0|1, dropped 0|1, continuedAs?}: a finished run keeps no signal
-- (dropped 1); nor does one that continued as new (continue-run.lua): a signal id its inbox holds
-- is a repeat ({1, 0, 0}), any other answers the successor's run id.
local lease_key, run_key, names_key, inbox_key, held_key, timers_key =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local prefix, run_id, signal_id, name, entry = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if redis.call('EXISTS', run_key) == 0 and redis.call('EXISTS', lease_key) == 0 then
  return { 0, 0 }
end
local finished = redis.call('HGET', lease_key, 'state') == 'finished'
local successor = redis.call('HGET', run_key, 'continuedAs')
if successor then
  if redis.call('HGET', names_key, signal_id) then
    return { 1, 0, 0 }
  end
  return { 1, 0, finished and 1 or 0, successor }
end
if finished then
  return { 1, 0, 1 }
end
if redis.call('HSETNX', names_key, signal_id, name) == 0 then
  return { 1, 0 }
end
local now = now_ms()
redis.call('RPUSH', inbox_key, ms(now) .. '|' .. entry)

local lease = redis.call('HMGET', lease_key, 'state', 'wait')
if lease[1] ~= 'suspended' or not lease[2] then
  return { 1, 0 }
end
for _, awaited in ipairs(cjson.decode(lease[2])) do
  if awaited == name then
    make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
    return { 1, 1 }
  end
end
return { 1, 0 }
