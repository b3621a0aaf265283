-- recordClaimFailure: counts a failed claim on the lease hash (failEpoch, failCount) while its
-- epoch is the lease's epoch and the run is not finished. The count carries on from a failure
-- recorded under epoch - 1 and starts at 1 otherwise: a claim that went well in between wrote
-- nothing, so the chain breaks by itself. The same epoch twice counts once.
-- KEYS: lease
-- ARGV: epoch
-- Returns the number of failed claims in a row, or -1 when fenced.
local lease = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'failEpoch', 'failCount')
if not lease[1] or lease[1] == 'finished' or lease[2] ~= ARGV[1] then
  return -1
end
if lease[3] == ARGV[1] then
  return tonumber(lease[4])
end
local count = 1
if lease[3] and tonumber(lease[3]) == tonumber(ARGV[1]) - 1 then
  count = tonumber(lease[4]) + 1
end
redis.call('HSET', KEYS[1], 'failEpoch', ARGV[1], 'failCount', count)
return count
