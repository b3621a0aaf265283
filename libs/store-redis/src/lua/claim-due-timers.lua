-- claimDueTimers: returns due timers earliest first and pushes each redeliverAfterMs into the
-- future, so a wake message lost after this call is retried by a later scan.
-- KEYS: timers
-- ARGV: limit, redeliverAfterMs
-- Returns a flat list: runId, dueAt (as stored), ...
local timers_key = KEYS[1]
local limit, redeliver = tonumber(ARGV[1]), tonumber(ARGV[2])
if limit <= 0 then
  return {}
end
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', timers_key, '-inf', ms(now), 'WITHSCORES', 'LIMIT', 0, limit)
local next_due = ms(now + redeliver)
for i = 1, #due, 2 do
  redis.call('ZADD', timers_key, next_due, due[i])
end
return due
