-- queries.answer: posts the reply to a claimed query while its ask still waits: kept under a key of
-- its own for a short while (the asker reads it there should it miss the message) and published on
-- the asker's reply channel. A reply to an ask that ended is dropped.
-- KEYS: query:<queryId> (query-ask.lua), query-reply:<queryId>
-- ARGV: queryId, reply JSON, reply ttlMs
-- Returns 1 when posted, 0 when the ask had ended.
local query_key, reply_key = KEYS[1], KEYS[2]
local reply_to = redis.call('HGET', query_key, 'reply_to')
if not reply_to then
  return 0
end
redis.call('SET', reply_key, ARGV[2], 'PX', ARGV[3])
redis.call('DEL', query_key)
redis.call('PUBLISH', reply_to, ARGV[1] .. '\n' .. ARGV[2])
return 1
