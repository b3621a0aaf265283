-- reapExpiredLeases: gives each expired held lease (earliest expiry first) to nobody, with an
-- expiry of now + reclaimAfterMs so the fleet's reapers report it once per period.
-- O(log n + limit) through the held index; never a scan of all leases.
-- KEYS: held
-- ARGV: prefix, limit, reclaimAfterMs
-- Returns the reaped run ids.
local held_key = KEYS[1]
local prefix, limit, reclaim = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if limit <= 0 then
  return {}
end
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', held_key, '-inf', ms(now), 'LIMIT', 0, limit)
local next_exp = ms(now + reclaim)
local reaped = {}
for _, run_id in ipairs(due) do
  local lease_key = prefix .. 'lease:' .. run_id
  local lease = redis.call('HMGET', lease_key, 'state', 'owner')
  if lease[1] == 'held' then
    if lease[2] then
      redis.call('SREM', owner_key(prefix, lease[2]), run_id)
      redis.call('HDEL', lease_key, 'owner')
    end
    redis.call('HSET', lease_key, 'exp', next_exp)
    redis.call('ZADD', held_key, next_exp, run_id)
    reaped[#reaped + 1] = run_id
  else
    -- Cannot happen while every script keeps the index; heal rather than report it forever.
    redis.call('ZREM', held_key, run_id)
  end
end
return reaped
