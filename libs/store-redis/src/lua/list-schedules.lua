-- listSchedules: schedules by id ascending after a cursor, filtered, one page.
-- KEYS: sched-ids
-- ARGV: key prefix, cursor ('' = from the start), limit, workflow ('' = any), paused ('' | '1' | '0')
-- Returns: more ('1' | '0'), then per schedule: id, rev, created, updated, rec
local limit = tonumber(ARGV[3])
local from = ARGV[2] == '' and '-' or ('(' .. ARGV[2])
local out = { '0' }
local found = 0
local CHUNK = 500
while true do
  local ids = redis.call('ZRANGEBYLEX', KEYS[1], from, '+', 'LIMIT', 0, CHUNK)
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', ARGV[1] .. 'sched:' .. id, 'rev', 'created', 'updated', 'rec', 'wf', 'paused')
    if f[1] and (ARGV[4] == '' or f[5] == ARGV[4]) and (ARGV[5] == '' or f[6] == ARGV[5]) then
      if found == limit then
        out[1] = '1'
        return out
      end
      found = found + 1
      out[#out + 1] = id
      out[#out + 1] = f[1]
      out[#out + 1] = f[2]
      out[#out + 1] = f[3]
      out[#out + 1] = f[4]
    end
  end
  if #ids < CHUNK then
    return out
  end
  from = '(' .. ids[#ids]
end
