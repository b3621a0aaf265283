-- readMembership: the published member list (publish-membership.lua), read by every worker every
-- period, so it costs a few bytes unless the list changed: the list is sent only when its
-- generation is not the one the reader knows.
-- KEYS: membership (HASH, see publish-membership.lua), scan-turn:<turn> (the publisher's turn)
-- ARGV: the generation the reader knows, as a decimal string ('0' for none)
-- Returns { generation ('0' when none was published), the JSON list or nil, 1 when nobody holds
-- the turn else 0 }.
local generation = redis.call('HGET', KEYS[1], 'generation')
local free = 0
if redis.call('EXISTS', KEYS[2]) == 0 then
  free = 1
end
if not generation then
  return { '0', false, free }
end
if generation == ARGV[1] then
  return { generation, false, free }
end
return { generation, redis.call('HGET', KEYS[1], 'members'), free }
