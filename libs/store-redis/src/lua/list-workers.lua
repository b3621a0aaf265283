-- listWorkers: removes up to ARGV[1] reports past their expiry (server clock), then returns
-- the others as a flat list: workerId, expiresAt, '<lastSeenAt>|<report JSON>', ...
-- KEYS: fleet-reports, fleet-expiry
-- ARGV: most stale reports removed per call
local now = now_ms()
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms(now), 'LIMIT', 0, tonumber(ARGV[1]))
for _, worker in ipairs(stale) do
  redis.call('HDEL', KEYS[1], worker)
  redis.call('ZREM', KEYS[2], worker)
end
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ms(now), '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local report = redis.call('HGET', KEYS[1], live[i])
  if report then
    out[#out + 1] = live[i]
    out[#out + 1] = live[i + 1]
    out[#out + 1] = report
  end
end
return out
