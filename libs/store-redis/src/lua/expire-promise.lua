-- expirePromise: the owner's step at a durable promise's deadline: a pending promise becomes
-- 'timed-out'; a completed one is kept as it is (contracts/promises.ts in @baton/core).
-- KEYS: promise:<token>
-- Returns the record's fields afterwards (HGETALL), empty for an unknown token.
local promise_key = KEYS[1]
if redis.call('HGET', promise_key, 'state') == 'pending' then
  redis.call('HSET', promise_key, 'state', 'timed-out', 'completed', ms(now_ms()))
end
return redis.call('HGETALL', promise_key)
