-- Appends one record to a run's journal stream, fenced by expected position, in one call.
-- KEYS[1] the run's journal stream (ids 0-<position>)
-- ARGV[1] the record's bytes
-- ARGV[2] the expected last position, or '' to append after whatever is last (a fence marker)
-- ARGV[3] this append's token: a retry of an append whose reply was lost carries the same one
-- Returns {'ok', position} or {'conflict', lastPosition}.
--
-- Fencing: a new owner appends its LeaseAcquired marker without an expected position, which moves
-- the last position on; every later append of the former owner still expects the old one and is
-- refused here, atomically, before anything is written.

local key = KEYS[1]
local data, expected, token = ARGV[1], ARGV[2], ARGV[3]

local function positionOf(id)
  return tonumber(string.match(id, '^0%-(%d+)$'))
end

local function tokenOf(fields)
  for i = 1, #fields, 2 do
    if fields[i] == 't' then return fields[i + 1] end
  end
  return nil
end

local newest = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
local last = 0
if #newest > 0 then last = positionOf(newest[1][1]) end

if expected ~= '' then
  local want = tonumber(expected)
  if last ~= want then
    -- This very append landed before (its reply was lost): answer where, as the first call would have.
    if last > want then
      local at = string.format('0-%d', want + 1)
      local landed = redis.call('XRANGE', key, at, at)
      if #landed > 0 and tokenOf(landed[1][2]) == token then return {'ok', want + 1} end
    end
    return {'conflict', last}
  end
elseif #newest > 0 and tokenOf(newest[1][2]) == token then
  return {'ok', last}
end

redis.call('XADD', key, string.format('0-%d', last + 1), 'd', data, 't', token)
return {'ok', last + 1}
