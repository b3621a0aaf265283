-- dueSchedules: schedules not paused whose next firing has come (server clock), earliest first.
-- KEYS: sched-due
-- ARGV: key prefix, limit
-- Returns: now, then per schedule: id, rev, created, updated, rec
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms(now), 'LIMIT', 0, tonumber(ARGV[2]))
local out = { ms(now) }
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', ARGV[1] .. 'sched:' .. id, 'rev', 'created', 'updated', 'rec')
  if f[1] then
    out[#out + 1] = id
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = f[3]
    out[#out + 1] = f[4]
  end
end
return out
