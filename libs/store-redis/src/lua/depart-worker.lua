-- departWorker: a graceful stop that leaves a record: removes the worker's live report and keeps
-- its last word as a handed-off departed worker, ended now, for keepMs (0: none).
-- KEYS: fleet-reports, fleet-expiry, fleet-keep, fleet-departed, fleet-departed-until
--       (see list-workers.lua)
-- ARGV: workerId, report JSON (checked by the caller), keepMs
local now = now_ms()
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local keep = tonumber(ARGV[3])
if keep > 0 then
  redis.call('HSET', KEYS[4], ARGV[1], ms(now) .. '|handed-off|' .. ms(now) .. '|' .. ARGV[2])
  redis.call('ZADD', KEYS[5], ms(now + keep), ARGV[1])
end
return now
