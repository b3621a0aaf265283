-- Appends one record to a group log stream.
-- KEYS[1] the log's stream (ids 0-<position>; `0-*` numbers on from the stream's last id, which a
--         trim keeps, so a position is never given twice)
-- ARGV[1] the record's bytes
-- ARGV[2] this append's token: a retry of an append whose reply was lost carries the same one
-- Returns the record's position.

local key = KEYS[1]
local data, token = ARGV[1], ARGV[2]

local newest = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
if #newest > 0 then
  local fields = newest[1][2]
  for i = 1, #fields, 2 do
    -- This very append landed before (its reply was lost): answer its position again.
    if fields[i] == 't' and fields[i + 1] == token then
      return tonumber(string.match(newest[1][1], '^0%-(%d+)$'))
    end
  end
end

local id = redis.call('XADD', key, '0-*', 'd', data, 't', token)
return tonumber(string.match(id, '^0%-(%d+)$'))
