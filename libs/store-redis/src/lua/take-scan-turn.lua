-- takeScanTurn: the turn of a fleet-wide scan, held for turnMs (the key's expiry, counted by the
-- server). Free, run out, or already the caller's (renewed): the caller holds it now.
-- KEYS: scan-turn:<scan> (STRING: the holder's worker id), fleet-expiry (ZSET of the workers'
--       reports: the count of workers, with commands the README's ACL list already grants)
-- ARGV: workerId, turnMs
-- Returns { 1 when the caller holds the turn else 0, workers that report }.
local holder = redis.call('GET', KEYS[1])
local workers = redis.call('ZCARD', KEYS[2])
if holder and holder ~= ARGV[1] then
  return { 0, workers }
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return { 1, workers }
