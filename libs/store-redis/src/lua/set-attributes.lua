-- attributes.set: applies a run's search attribute changes to its record, indexes and counts
-- (prelude: 'attr:<name>' fields, index:attr, index:attrv, index:attrc), only while `epoch` is the
-- lease's epoch and the run is not finished (the fence against zombie writers). A run whose lease
-- exists without a record keeps nothing.
-- KEYS: lease, run
-- ARGV: prefix, epoch, runId, then pairs of name, stored value ('<t>:<value>', '' removes it)
-- Returns 'ok' | 'fenced'
local lease = redis.call('HMGET', KEYS[1], 'state', 'epoch')
if not lease[1] or lease[1] == 'finished' or lease[2] ~= ARGV[2] then
  return 'fenced'
end
local run_key, prefix, run_id = KEYS[2], ARGV[1], ARGV[3]
local run = redis.call('HMGET', run_key, 'status', 'workflow', 'createdAt', 'attrs')
if not run[1] then
  return 'ok'
end
local status, workflow, created_at = run[1], run[2], run[3]
local names, held = {}, {}
for _, name in ipairs(attr_names(run[4])) do
  names[#names + 1] = name
  held[name] = true
end
for i = 4, #ARGV, 2 do
  local name, stored = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', run_key, 'attr:' .. name)
  if (old or '') ~= stored then
    if old then
      attr_index(prefix, run_id, name, old, created_at, status, workflow, -1)
    end
    if stored == '' then
      redis.call('HDEL', run_key, 'attr:' .. name)
      held[name] = nil
    else
      attr_index(prefix, run_id, name, stored, created_at, status, workflow, 1)
      redis.call('HSET', run_key, 'attr:' .. name, stored)
      if not held[name] then
        names[#names + 1] = name
        held[name] = true
      end
    end
  end
end
local kept = {}
for _, name in ipairs(names) do
  if held[name] then
    kept[#kept + 1] = name
  end
end
if #kept == 0 then
  redis.call('HDEL', run_key, 'attrs')
else
  redis.call('HSET', run_key, 'attrs', ',' .. table.concat(kept, ',') .. ',')
end
return 'ok'
