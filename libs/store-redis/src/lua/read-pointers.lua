-- readPointers: a run's pointers from index `from` to `to` (0-based, inclusive; -1: to the end),
-- and whether the run is grouped (contracts/group-journal.ts; op_append_pointers in prelude.lua has the layout).
-- KEYS: the run's pointer list
-- ARGV: from, to
-- Returns {grouped (1 or 0), pointers...}
local key = KEYS[1]
local first = redis.call('LINDEX', key, 0)
if not first or first == '!own' then
  return { 0 }
end
local out = { 1 }
for _, pointer in ipairs(redis.call('LRANGE', key, ARGV[1], ARGV[2])) do
  out[#out + 1] = pointer
end
return out
