-- groupLogUse: every group log the store knows (prelude.lua's retention indexes), with its newest
-- recorded record and the lowest record a kept run's pointers name ('' when none does).
-- KEYS: the logs' hash
-- ARGV: prefix
-- Returns a flat list: log, newest, oldest needed, ...
local out = {}
local logs = redis.call('HGETALL', KEYS[1])
for i = 1, #logs, 2 do
  local log = logs[i]
  local lowest = redis.call('ZRANGEBYSCORE', ARGV[1] .. 'glog:' .. log, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  out[#out + 1] = log
  out[#out + 1] = logs[i + 1]
  out[#out + 1] = lowest[2] or ''
end
return out
