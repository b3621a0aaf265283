-- queries.ask: posts a query (contracts/query-mailbox.ts in @baton/core) for the length of its ask
-- and tells the workers that may answer it, in one step, so no worker hears of a request it cannot
-- read yet.
-- KEYS: query:<queryId>  HASH req -> the request JSON, reply_to -> the asker's reply channel,
--                        claimed -> the worker that took it (query-claim.lua)
-- ARGV: request JSON, reply channel, ttlMs, notice channel, notice JSON
-- Returns how many subscribers heard the notice; with none the request is withdrawn at once, so the
-- asker need not wait for an answer nobody can give.
local query_key = KEYS[1]
redis.call('HSET', query_key, 'req', ARGV[1], 'reply_to', ARGV[2])
redis.call('PEXPIRE', query_key, ARGV[3])
local heard = redis.call('PUBLISH', ARGV[4], ARGV[5])
if heard == 0 then
  redis.call('DEL', query_key)
end
return heard
