-- pendingUpdates: the run's update requests not settled yet, oldest first, in one read.
-- KEYS: pending, order (see request-update.lua)
-- Returns a flat list {updateId, '<requestedAt>|<recordJson>', ...}
local pending_key, order_key = KEYS[1], KEYS[2]
local out = {}
for _, update_id in ipairs(redis.call('LRANGE', order_key, 0, -1)) do
  local request = redis.call('HGET', pending_key, update_id)
  if request then
    out[#out + 1] = update_id
    out[#out + 1] = request
  end
end
return out
