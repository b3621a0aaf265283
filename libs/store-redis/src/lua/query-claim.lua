-- queries.claim: takes a posted query to answer it. Exactly one worker gets the request; the others,
-- and any worker after the ask ended (the key withdrawn or expired), get false.
-- KEYS: query:<queryId> (query-ask.lua)
-- ARGV: workerId
-- Returns the request JSON, or false.
local query_key = KEYS[1]
if redis.call('EXISTS', query_key) == 0 then
  return false
end
if redis.call('HSETNX', query_key, 'claimed', ARGV[1]) == 0 then
  return false
end
return redis.call('HGET', query_key, 'req')
