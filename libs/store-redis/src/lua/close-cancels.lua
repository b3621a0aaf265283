-- closeCancels: the owner's fenced step before it journals a completed or failed end. A cancel
-- already requested is answered (the run ends cancelled instead) and nothing changes; otherwise
-- the lease records that its current epoch closed the run's cancels, so request-cancel.lua answers
-- too late from here on. A later epoch (a new owner) accepts cancels again without clearing it.
-- KEYS: lease, cancel
-- ARGV: epoch
-- Returns {'fenced'} | {'cancel-requested', flag} | {'closed'}
local lease_key, cancel_key = KEYS[1], KEYS[2]
local epoch = ARGV[1]
local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
if lease[1] ~= 'held' or lease[2] ~= epoch then
  return { 'fenced' }
end
local flag = redis.call('GET', cancel_key)
if flag then
  return { 'cancel-requested', flag }
end
redis.call('HSET', lease_key, 'closed', epoch)
return { 'closed' }
