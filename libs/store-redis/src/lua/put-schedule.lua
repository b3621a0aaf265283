-- createSchedule / updateSchedule: writes a schedule, a compare-and-set on its revision.
-- KEYS: sched:<id> (HASH rev, created, updated, wf, paused, rec), sched-ids (ZSET, score 0),
--       sched-due (ZSET id -> nextFireAt, only for schedules not paused with one)
-- ARGV: id, expected revision ('' = create), workflow, paused ('1'/'0'), nextFireAt ('' = none),
--       the schedule JSON (checked by the caller)
-- Returns: status ('created' | 'exists' | 'ok' | 'not-found' | 'conflict'), rev, created, updated, rec
local rev = redis.call('HGET', KEYS[1], 'rev')
local function stored(status)
  local f = redis.call('HMGET', KEYS[1], 'rev', 'created', 'updated', 'rec')
  return { status, f[1], f[2], f[3], f[4] }
end
if ARGV[2] == '' then
  if rev then
    return stored('exists')
  end
else
  if not rev then
    return { 'not-found' }
  end
  if rev ~= ARGV[2] then
    return stored('conflict')
  end
end
local now = ms(now_ms())
local created = now
if rev then
  created = redis.call('HGET', KEYS[1], 'created')
end
local next_rev = rev and tostring(tonumber(rev) + 1) or '1'
redis.call('HSET', KEYS[1], 'rev', next_rev, 'created', created, 'updated', now, 'wf', ARGV[3],
  'paused', ARGV[4], 'rec', ARGV[6])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
if ARGV[4] == '0' and ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
else
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return { rev and 'ok' or 'created', next_rev, created, now, ARGV[6] }
