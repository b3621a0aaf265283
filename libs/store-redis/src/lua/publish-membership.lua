-- publishMembership: the fleet's member list, published by the holder of the membership turn for
-- every worker to read (read-membership.lua). The generation moves exactly when the list changes,
-- and is never reused: at least the server's clock in ms, so a record lost with the data (a
-- restart without persistence) starts above any generation a reader still knows.
-- KEYS: membership (HASH generation -> the generation, members -> the JSON list)
-- ARGV: the members as a JSON array, sorted and without repeats (the caller's), so equal sets
--       compare equal as strings
-- Returns the generation now published, as a string.
local current = redis.call('HMGET', KEYS[1], 'generation', 'members')
if current[1] and current[2] == ARGV[1] then
  -- The same set: nothing is written (the holder publishes every period).
  return current[1]
end
local generation = ms(math.max((tonumber(current[1]) or 0) + 1, now_ms()))
redis.call('HSET', KEYS[1], 'generation', generation, 'members', ARGV[1])
return generation
