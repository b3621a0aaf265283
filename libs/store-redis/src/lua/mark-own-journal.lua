-- markOwnJournal: a fence marker's cheap path (contracts/group-journal.ts; the list's layout is in
-- op_append_pointers in prelude.lua). A run with no pointer list is marked as journaled on its own ('!own');
-- a run with pointers is left as it is.
-- KEYS: the run's pointer list
-- Returns 'own' or 'grouped'
local key = KEYS[1]
local first = redis.call('LINDEX', key, 0)
if not first then
  redis.call('RPUSH', key, '!own')
  return 'own'
end
if first == '!own' then
  return 'own'
end
return 'grouped'
