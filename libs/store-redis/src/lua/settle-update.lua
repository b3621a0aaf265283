-- settleUpdate: the run's owner keeps an update's outcome, fenced by its epoch; the first settle of
-- an id wins, and the id leaves the pending list (contracts/updates.ts in @baton/core).
-- KEYS: lease, pending, order, kept (see request-update.lua)
-- ARGV: epoch, updateId, recordJson ({"name","outcome"}, never decoded here)
-- Returns {'fenced'} | {'ok', '<settledAt>|<recordJson>' as kept}
local lease_key, pending_key, order_key, kept_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local epoch, update_id, record = ARGV[1], ARGV[2], ARGV[3]
local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if lease[1] ~= 'held' or lease[2] ~= epoch then
  return { 'fenced' }
end
redis.call('HDEL', pending_key, update_id)
-- The order list keeps settled ids (pending-updates.lua skips them) until nothing is pending: then
-- it goes, so it holds at most the ids since the run last had none (and needs no LREM grant).
if redis.call('EXISTS', pending_key) == 0 then
  redis.call('DEL', order_key)
end
local kept = redis.call('HGET', kept_key, update_id)
if not kept then
  kept = ms(now_ms()) .. '|' .. record
  redis.call('HSET', kept_key, update_id, kept)
end
return { 'ok', kept }
