-- appendPointers: group commit's pointers for many runs in one step (contracts/group-journal.ts).
-- A run's pointers are the list '<prefix>jptr:<runId>', element i the pointer at position
-- base + i + 1 as '<record>:<log>'; a run journaled on its own holds the single element '!own'.
-- Each run's append is decided on its own: a new run's first append (expected '0') starts its list;
-- a fence marker (expected '') to a run with no list marks it as its own; a run of its own is never
-- grouped; otherwise the pointer goes after the last one when the expected position is the last
-- (or none was given), else it is refused with the last position.
-- An accepted pointer is counted in the group log's retention indexes (prelude.lua).
-- KEYS: the pointer list of each append, in order
-- ARGV: prefix, then for each append three values: expected ('' for none, else the position's
--       offset from the base, '0' for an empty journal, or 'x' for a position of the run's own
--       journal), log, record
-- Returns for each append 'a<count>' (appended, the run's count now), 'c<count>' (conflict, the
-- run's count), or 'n' (not grouped).
local prefix = ARGV[1]
local results = {}
local newest = {}
for i, key in ipairs(KEYS) do
  local expected, log, record = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local run_id = string.sub(key, #prefix + 6)
  local count = redis.call('LLEN', key)
  if count == 0 then
    if expected == '0' then
      redis.call('RPUSH', key, record .. ':' .. log)
      pointer_accepted(prefix, run_id, log, record, newest)
      results[i] = 'a1'
    else
      if expected == '' then
        redis.call('RPUSH', key, '!own')
      end
      results[i] = 'n'
    end
  elseif redis.call('LINDEX', key, 0) == '!own' then
    results[i] = 'n'
  elseif expected ~= '' and expected ~= tostring(count) then
    results[i] = 'c' .. count
  else
    redis.call('RPUSH', key, record .. ':' .. log)
    pointer_accepted(prefix, run_id, log, record, newest)
    results[i] = 'a' .. (count + 1)
  end
end
newest_records_seen(prefix, newest)
return results
