-- listWorkers: removes up to ARGV[1] reports past their expiry (server clock), keeping each as an
-- expired departed worker when its report asked for that (fleet-keep), and prunes up to ARGV[1]
-- departed workers past their retention. Then, with ARGV[2] 'live', returns the live reports as a
-- flat list: workerId, expiresAt, '<lastSeenAt>|<report JSON>', ...; with 'departed', the
-- departed workers: workerId, keptUntil, '<lastSeenAt>|<ended>|<endedAt>|<report JSON>', ...
-- KEYS: fleet-reports, fleet-expiry, fleet-keep,
--       fleet-departed (HASH workerId -> '<lastSeenAt>|<ended>|<endedAt>|<report JSON>'),
--       fleet-departed-until (ZSET workerId -> keptUntil)
-- ARGV: most records removed per call, 'live' or 'departed'
local now = now_ms()
local limit = tonumber(ARGV[1])
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms(now), 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #stale, 2 do
  local worker = stale[i]
  local expired_at = tonumber(stale[i + 1])
  local keep = tonumber(redis.call('HGET', KEYS[3], worker) or '0')
  local report = redis.call('HGET', KEYS[1], worker)
  if report and keep > 0 and expired_at + keep > now then
    local bar = string.find(report, '|', 1, true)
    redis.call('HSET', KEYS[4], worker,
      string.sub(report, 1, bar - 1) .. '|expired|' .. ms(expired_at) .. string.sub(report, bar))
    redis.call('ZADD', KEYS[5], ms(expired_at + keep), worker)
  end
  redis.call('HDEL', KEYS[1], worker)
  redis.call('ZREM', KEYS[2], worker)
  redis.call('HDEL', KEYS[3], worker)
end
local pruned = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', ms(now), 'LIMIT', 0, limit)
for _, worker in ipairs(pruned) do
  redis.call('HDEL', KEYS[4], worker)
  redis.call('ZREM', KEYS[5], worker)
end
local hash, index = KEYS[1], KEYS[2]
if ARGV[2] == 'departed' then hash, index = KEYS[4], KEYS[5] end
local kept = redis.call('ZRANGEBYSCORE', index, '(' .. ms(now), '+inf', 'WITHSCORES')
local out = {}
for i = 1, #kept, 2 do
  local stored = redis.call('HGET', hash, kept[i])
  if stored then
    out[#out + 1] = kept[i]
    out[#out + 1] = kept[i + 1]
    out[#out + 1] = stored
  end
end
return out
