-- acquireSlot: a run asks for a slot of a concurrency key (contracts/concurrency.ts).
-- KEYS: slot:<key> (holders), slot-wait:<key> (line), slot-seq, timers
-- ARGV: prefix, runId, limit
-- Returns { 1 when the run holds a slot else 0, runs handed a slot (to wake)... }.
local holders_key, waiting_key, seq_key, timers_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, run_id, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local reply = { 0 }
for _, woken in ipairs(settle_slots(prefix, holders_key, waiting_key, timers_key, limit)) do
  reply[#reply + 1] = woken
end
if redis.call('ZSCORE', holders_key, run_id) then
  reply[1] = 1
elseif redis.call('ZCARD', holders_key) < limit and redis.call('ZCARD', waiting_key) == 0 then
  redis.call('ZADD', holders_key, now_ms(), run_id)
  reply[1] = 1
elseif not redis.call('ZSCORE', waiting_key, run_id) then
  redis.call('ZADD', waiting_key, redis.call('HINCRBY', seq_key, 'n', 1), run_id)
end
return reply
