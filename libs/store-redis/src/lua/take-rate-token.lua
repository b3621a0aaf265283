-- takeRateToken: one ask for a place under a rate limit (contracts/rate-limits.ts in @baton/core).
-- KEYS: rate:<name>|<key>  ZSET grant id -> grant time (ms, this server's clock): the sliding log
-- ARGV: limit, perMs
-- Returns { 1, 0 } when granted, { 0, waitMs } when refused.
local log_key = KEYS[1]
local limit, per = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
-- Grants at or before now - per have left the window. One ZREM per grant: each grant is removed
-- once, so the cost per call stays small, and ZREMRANGEBYSCORE needs no place in the ACL.
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', log_key, '-inf', now - per)) do
  redis.call('ZREM', log_key, gone)
end
local held = redis.call('ZCARD', log_key)
if held < limit then
  -- Unique: at one server time the log only grows, so `held` differs for every grant of that ms.
  redis.call('ZADD', log_key, now, ms(now) .. '-' .. held)
  -- Once the newest grant has left the window the log says nothing: let Redis drop it.
  redis.call('PEXPIRE', log_key, per)
  return { 1, 0 }
end
-- A place frees when the (held - limit + 1)-th oldest grant leaves the window.
local freeing = redis.call('ZRANGEBYSCORE', log_key, '-inf', '+inf', 'WITHSCORES', 'LIMIT', held - limit, 1)
return { 0, math.max(1, tonumber(freeing[2]) + per - now) }
