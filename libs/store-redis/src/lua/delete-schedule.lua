-- deleteSchedule: removes a schedule (only at the expected revision, when given).
-- KEYS: sched:<id>, sched-ids, sched-due
-- ARGV: id, expected revision ('' = any)
-- Returns: status ('ok' | 'not-found' | 'conflict'), rev, created, updated, rec
local f = redis.call('HMGET', KEYS[1], 'rev', 'created', 'updated', 'rec')
if not f[1] then
  return { 'not-found' }
end
if ARGV[2] ~= '' and f[1] ~= ARGV[2] then
  return { 'conflict', f[1], f[2], f[3], f[4] }
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return { 'ok', f[1], f[2], f[3], f[4] }
