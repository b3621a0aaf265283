-- acquireLease: takes the run's lease with epoch = previous + 1 until now + ttl.
-- KEYS: lease, held, timers, run, cancel
-- ARGV: prefix, runId, owner, ttlMs
-- Returns {'ok', epoch, cancelRequested 0|1} | {'held', owner, exp} | {'finished'}
local lease_key, held_key, timers_key, run_key, cancel_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, run_id, owner, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local now = now_ms()

local lease = redis.call('HMGET', lease_key, 'state', 'owner', 'exp', 'epoch')
local state, current_owner, exp, epoch = lease[1], lease[2], lease[3], lease[4]
if state == 'finished' then
  return { 'finished' }
end
-- An ownerless held lease (handed off or reaped) is free even though the reaper moved its
-- expiry on: that expiry only paces the reaper.
if state == 'held' and current_owner and tonumber(exp) > now then
  return { 'held', current_owner, exp }
end

if current_owner then
  redis.call('SREM', owner_key(prefix, current_owner), run_id)
end
local next_epoch = (tonumber(epoch) or 0) + 1
local expires = now + ttl
redis.call('HSET', lease_key, 'epoch', ms(next_epoch), 'state', 'held', 'owner', owner, 'exp', ms(expires))
redis.call('HDEL', lease_key, 'wait')
redis.call('ZADD', held_key, ms(expires), run_id)
redis.call('SADD', owner_key(prefix, owner), run_id)
redis.call('ZREM', timers_key, run_id)
if redis.call('EXISTS', run_key) == 1 then
  redis.call('HSET', run_key, 'status', 'running', 'updatedAt', ms(now))
  redis.call('HINCRBY', run_key, 'attempts', 1)
end
return { 'ok', next_epoch, redis.call('EXISTS', cancel_key) }
