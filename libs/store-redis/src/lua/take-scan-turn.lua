-- takeScanTurn: the turn of a fleet-wide scan, held for turnMs (the key's expiry, counted by the
-- server). Free, run out, already the caller's worker's (renewed), or still held by exactly the
-- value the caller found dead (its presence connection gone, presence.ts invariant 5): the caller
-- holds it now.
-- KEYS: scan-turn:<scan> (STRING: the holder's turn value, '@<presence client id> <worker id>', or
--       the bare worker id of a worker with no presence connection or of an earlier release),
--       fleet-expiry (ZSET of the workers' reports: the count of workers, with commands the
--       README's ACL list already grants)
-- ARGV: the caller's turn value, turnMs, the value to take over ('' for none)
-- Returns { 1 when the caller holds the turn else 0, workers that report, the holder's value
-- before this call or false }.
local function worker_of(value)
  return string.match(value, '^@%d+ (.*)$') or value
end
local holder = redis.call('GET', KEYS[1])
local workers = redis.call('ZCARD', KEYS[2])
if holder and worker_of(holder) ~= worker_of(ARGV[1]) and holder ~= ARGV[3] then
  return { 0, workers, holder }
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return { 1, workers, holder }
