-- renewLeases: extends every lease of a batch in one call (one round trip per worker and beat).
-- KEYS: held, then per request: lease, cancel
-- ARGV: ttlMs, then per request: runId, epoch
-- Returns a flat list: per request, ok 0|1, cancelRequested 0|1 and pauseRequested 0|1, in
-- request order.
local held_key = KEYS[1]
local ttl = tonumber(ARGV[1])
local now = now_ms()
local out = {}
local count = (#KEYS - 1) / 2
for i = 1, count do
  local lease_key, cancel_key = KEYS[2 * i], KEYS[2 * i + 1]
  local run_id, epoch = ARGV[2 * i], ARGV[2 * i + 1]
  local lease = redis.call('HMGET', lease_key, 'state', 'epoch', 'owner', 'exp')
  -- An ownerless lease was reaped or handed off: its old holder must stop, even though the
  -- reaper moved the expiry into the future.
  local ok = lease[1] == 'held' and lease[2] == epoch and lease[3] and tonumber(lease[4]) > now
  if ok then
    local expires = now + ttl
    redis.call('HSET', lease_key, 'exp', ms(expires))
    redis.call('ZADD', held_key, ms(expires), run_id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  out[#out + 1] = redis.call('EXISTS', cancel_key)
  out[#out + 1] = redis.call('HGET', lease_key, 'pause') and 1 or 0
end
return out
