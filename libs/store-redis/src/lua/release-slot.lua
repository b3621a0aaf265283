-- releaseSlot: a run gives its slot of a concurrency key up, or leaves its line
-- (contracts/concurrency.ts).
-- KEYS: slot:<key> (holders), slot-wait:<key> (line), timers
-- ARGV: prefix, runId, limit
-- Returns the runs handed a freed slot (to wake).
local holders_key, waiting_key, timers_key = KEYS[1], KEYS[2], KEYS[3]
local prefix, run_id, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('ZREM', holders_key, run_id)
redis.call('ZREM', waiting_key, run_id)
return settle_slots(prefix, holders_key, waiting_key, timers_key, limit)
