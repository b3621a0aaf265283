-- forgetGroupLog: forgets a group log when no kept run's pointer names a record of it and no
-- pointer into it was accepted since its newest recorded record was read (prelude.lua).
-- KEYS: the logs' hash, the log's ZSET
-- ARGV: log, newest recorded
-- Returns 1 forgotten, 0 kept
local newest = redis.call('HGET', KEYS[1], ARGV[1])
if not newest or tonumber(newest) ~= tonumber(ARGV[2]) or redis.call('ZCARD', KEYS[2]) > 0 then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
