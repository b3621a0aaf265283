-- listRuns' page in one step (one snapshot, one round trip): walks the narrowest query index
-- (prelude; for several statuses, their sets merged; for a worker, its owner set) in the page's
-- order from just after the cursor, tests each run against the rest of the filter, and stops at `want` matches or after examining `budget` runs, so one call's work is
-- bounded however few runs match.
-- KEYS: none (the index keys depend on the filter; built from the prefix)
-- ARGV: prefix, order ('newest'|'oldest'), want, budget,
--       afterCreatedAt, afterRunId ('' = from the start),
--       createdAfter (inclusive), createdBefore (exclusive) ('' = unbounded),
--       statuses (comma-separated, '' = any), workflow, version, updatedAfter, updatedBefore,
--       runIdPrefix, idempotencyKeyPrefix, worker ('' = not filtered),
--       then the search attribute tests: their count, and per test name, type letter (k, b, n, t),
--       eq, gt, gte, lt, lte ('' = none; a boolean as 'true'/'false', a number as JavaScript writes it)
-- Returns { matches, lastCreatedAt, lastRunId }: matches are { record as HGETALL pairs, lease
-- epoch, lease state, lease owner } ('' when absent); last* is the last run examined ('' when none).
local prefix, order, want, budget = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local after_c, after_r = tonumber(ARGV[5]), ARGV[6]
local created_from, created_before = tonumber(ARGV[7]), tonumber(ARGV[8])
local workflow, version = ARGV[10], tonumber(ARGV[11])
local updated_from, updated_before = tonumber(ARGV[12]), tonumber(ARGV[13])
local id_prefix, key_prefix, worker = ARGV[14], ARGV[15], ARGV[16]
local newest = order == 'newest'

-- Search attribute tests (prelude: 'attr:<name>' fields and the index:attr / index:attrv sets).
local tests = {}
for i = 0, tonumber(ARGV[17] or '0') - 1 do
  local at = 18 + i * 7
  tests[#tests + 1] = {
    name = ARGV[at], t = ARGV[at + 1], eq = ARGV[at + 2], gt = tonumber(ARGV[at + 3]),
    gte = tonumber(ARGV[at + 4]), lt = tonumber(ARGV[at + 5]), lte = tonumber(ARGV[at + 6]),
    -- The bounds as given, for ZRANGEBYSCORE (re-formatting a double could move it).
    raw = { gt = ARGV[at + 3], gte = ARGV[at + 4], lt = ARGV[at + 5], lte = ARGV[at + 6] },
  }
end
local attr_fields = {}
for i, test in ipairs(tests) do
  attr_fields[i] = 'attr:' .. test.name
end

local statuses, status_count = {}, 0
for status in string.gmatch(ARGV[9], '[^,]+') do
  statuses[status] = true
  status_count = status_count + 1
end

-- The smallest indexes that hold every match between them: the statuses' sets (merged), the
-- workflow's set, or all runs; compared by size (ZCARD is O(1)).
local indexes = { prefix .. 'index:all' }
local size = redis.call('ZCARD', indexes[1])
if workflow ~= '' then
  local key = prefix .. 'index:workflow:' .. workflow
  local n = redis.call('ZCARD', key)
  if n < size then
    indexes, size = { key }, n
  end
end
if status_count > 0 then
  local keys, n = {}, 0
  for status in pairs(statuses) do
    keys[#keys + 1] = prefix .. 'index:status:' .. status
    n = n + redis.call('ZCARD', keys[#keys])
  end
  if n < size then
    indexes, size = keys, n
  end
end
-- For a worker, its owner set (the runs whose lease it holds; prelude) when that is smaller still.
local owned_key = nil
if worker ~= '' then
  local key = owner_key(prefix, worker)
  local n = redis.call('SCARD', key)
  if n < size then
    owned_key, size = key, n
  end
end

-- For a keyword or boolean equality, the runs of its value (in the listing's order) when fewer.
for _, test in ipairs(tests) do
  if test.eq ~= '' and attr_counted(test.t) then
    local key = prefix .. 'index:attr:' .. test.name .. ':' .. test.t .. ':' .. test.eq
    local n = redis.call('ZCARD', key)
    if n < size then
      indexes, size, owned_key = { key }, n, nil
    end
  end
end

-- For a run-id or idempotency-key prefix, the runs of its prefix index (prelude: index:ids,
-- index:keys) when there are at most `budget` of them, fewer than the smallest index so far: the
-- members from the prefix on, bytewise, up to the first that does not start with it. nil when there
-- are more (a broad prefix: walking an index finds its matches soon enough).
local function prefix_runs(key, start, run_id_of)
  local members = redis.call('ZRANGEBYLEX', key, '[' .. start, '+', 'LIMIT', 0, budget + 1)
  local runs = {}
  for _, member in ipairs(members) do
    if string.sub(member, 1, #start) ~= start then
      break
    end
    runs[#runs + 1] = run_id_of(member)
  end
  if #runs > budget then
    return nil
  end
  return runs
end
local prefix_set = nil
if id_prefix ~= '' then
  local runs = prefix_runs(prefix .. 'index:ids', id_prefix, function(member)
    return member
  end)
  if runs and #runs < size then
    prefix_set, size, owned_key = runs, #runs, nil
  end
end
if key_prefix ~= '' then
  local runs = prefix_runs(prefix .. 'index:keys', key_prefix, function(member)
    -- '<key>\0<run id>': run ids hold no NUL, so the id is what follows the last one.
    return string.match(member, '%z([^%z]*)$')
  end)
  if runs and #runs < size then
    prefix_set, size, owned_key = runs, #runs, nil
  end
end

-- For a number or time test, the runs of its range (index:attrv) when there are at most `budget`
-- of them, fewer than the smallest index so far; read as a prefix's runs are.
for _, test in ipairs(tests) do
  if not attr_counted(test.t) then
    local low, high = '-inf', '+inf'
    if test.eq ~= '' then
      low, high = test.eq, test.eq
    else
      if test.gte then
        low = test.raw.gte
      elseif test.gt then
        low = '(' .. test.raw.gt
      end
      if test.lte then
        high = test.raw.lte
      elseif test.lt then
        high = '(' .. test.raw.lt
      end
    end
    local runs = redis.call('ZRANGEBYSCORE', prefix .. 'index:attrv:' .. test.name .. ':' .. test.t, low, high,
      'LIMIT', 0, budget + 1)
    if #runs <= budget and #runs < size then
      prefix_set, size, owned_key = runs, #runs, nil
    end
  end
end

-- Bytewise order, as Redis orders members of equal score (Lua's < may follow the locale).
local function bytes_before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- Score bounds: the cursor's createdAt (inclusive; ties at it are skipped below) and the range.
local low, high = '-inf', '+inf'
if created_from then
  low = ms(created_from)
end
if created_before then
  high = '(' .. ms(created_before)
end
if after_c then
  if newest and (not created_before or after_c < created_before) then
    high = ms(after_c)
  elseif not newest and (not created_from or after_c > created_from) then
    low = ms(after_c)
  end
end

local function past_cursor(score, run_id)
  if not after_c or score ~= after_c then
    return true
  end
  if newest then
    return bytes_before(run_id, after_r)
  end
  return run_id ~= after_r and not bytes_before(run_id, after_r)
end

local function starts_with(text, start)
  return start == '' or (text and string.sub(text, 1, #start) == start)
end

-- Whether a stored attribute ('<t>:<value>', or nil) passes a test.
local function passes(stored, test)
  if not stored or string.sub(stored, 1, 1) ~= test.t then
    return false
  end
  local value = string.sub(stored, 3)
  if attr_counted(test.t) then
    return value == test.eq
  end
  local n = tonumber(value)
  if test.eq ~= '' then
    return n == tonumber(test.eq)
  end
  return (not test.gt or n > test.gt) and (not test.gte or n >= test.gte) and (not test.lt or n < test.lt)
    and (not test.lte or n <= test.lte)
end

local function matches(run_id)
  if not starts_with(run_id, id_prefix) then
    return false
  end
  -- The attribute tests first, reading only their fields: a walk for a sparse attribute filter
  -- rejects most runs here, at the cost of one small read each.
  if #tests > 0 then
    local stored = redis.call('HMGET', prefix .. 'run:' .. run_id, unpack(attr_fields))
    for i, test in ipairs(tests) do
      if not passes(stored[i], test) then
        return false
      end
    end
  end
  local run = redis.call('HMGET', prefix .. 'run:' .. run_id, 'status', 'workflow', 'version', 'updatedAt',
    'idempotencyKey')
  if not run[1] then
    return false
  end
  if status_count > 0 and not statuses[run[1]] then
    return false
  end
  if workflow ~= '' and run[2] ~= workflow then
    return false
  end
  if version and tonumber(run[3]) ~= version then
    return false
  end
  local updated = tonumber(run[4])
  if (updated_from and updated < updated_from) or (updated_before and updated >= updated_before) then
    return false
  end
  if key_prefix ~= '' and not starts_with(run[5], key_prefix) then
    return false
  end
  if worker ~= '' then
    local lease = redis.call('HMGET', prefix .. 'lease:' .. run_id, 'state', 'owner')
    if lease[1] ~= 'held' or lease[2] ~= worker then
      return false
    end
  end
  return true
end

local batch = 200

-- Reads one index in the page's order from just after the cursor, a batch at a time: each call
-- returns the next run id and its score, or nil at the end.
local function reader(key)
  local buffer, at, offset, done = {}, 1, 0, false
  return function()
    while true do
      if at > #buffer then
        if done then
          return nil
        end
        if newest then
          buffer = redis.call('ZREVRANGEBYSCORE', key, high, low, 'WITHSCORES', 'LIMIT', offset, batch)
        else
          buffer = redis.call('ZRANGEBYSCORE', key, low, high, 'WITHSCORES', 'LIMIT', offset, batch)
        end
        offset, at, done = offset + batch, 1, #buffer < 2 * batch
        if #buffer == 0 then
          return nil
        end
      end
      local run_id, score = buffer[at], buffer[at + 1]
      at = at + 2
      if past_cursor(tonumber(score), run_id) then
        return run_id, score
      end
    end
  end
end

local function comes_first(a_id, a_score, b_id, b_score)
  local x, y = tonumber(a_score), tonumber(b_score)
  if x ~= y then
    return (newest and x > y) or (not newest and x < y)
  end
  if newest then
    return bytes_before(b_id, a_id)
  end
  return bytes_before(a_id, b_id)
end

-- Reads a small unordered set of runs as an index (a prefix's runs, or the worker's owner set),
-- sorted here, those within the created-at range and after the cursor. For the owner set,
-- SRANDMEMBER with the set's size returns every member once (SMEMBERS would need one more ACL rule).
local function listed_reader(run_ids)
  local entries = {}
  for _, run_id in ipairs(run_ids) do
    local created = redis.call('HGET', prefix .. 'run:' .. run_id, 'createdAt')
    local score = tonumber(created)
    if score and (not created_from or score >= created_from) and (not created_before or score < created_before)
      and (not after_c or comes_first(after_r, after_c, run_id, score)) then
      entries[#entries + 1] = { run_id, created }
    end
  end
  table.sort(entries, function(a, b)
    return comes_first(a[1], a[2], b[1], b[2])
  end)
  local at = 0
  return function()
    at = at + 1
    if entries[at] then
      return entries[at][1], entries[at][2]
    end
    return nil
  end
end

-- One head per index; the next run is the head that comes first (a run is in one status set only).
local heads = {}
local readers = {}
if prefix_set then
  readers[1] = listed_reader(prefix_set)
elseif owned_key then
  readers[1] = listed_reader(redis.call('SRANDMEMBER', owned_key, redis.call('SCARD', owned_key)))
else
  for _, key in ipairs(indexes) do
    readers[#readers + 1] = reader(key)
  end
end
for _, read in ipairs(readers) do
  local run_id, score = read()
  if run_id then
    heads[#heads + 1] = { read = read, id = run_id, score = score }
  end
end

local found, examined = {}, 0
local last_c, last_r, cut = '', '', false
while #found < want do
  local best = nil
  for _, head in ipairs(heads) do
    if head.id and (not best or comes_first(head.id, head.score, best.id, best.score)) then
      best = head
    end
  end
  if not best then
    break
  end
  if examined >= budget then
    cut = true
    break
  end
  local run_id = best.id
  examined = examined + 1
  last_c, last_r = best.score, run_id
  if matches(run_id) then
    local lease = redis.call('HMGET', prefix .. 'lease:' .. run_id, 'epoch', 'state', 'owner')
    found[#found + 1] = { redis.call('HGETALL', prefix .. 'run:' .. run_id), lease[1] or '', lease[2] or '',
      lease[3] or '' }
  end
  best.id, best.score = best.read()
end
if not cut then
  -- Not cut short by the budget: the caller's cursor comes from its last match.
  last_c, last_r = '', ''
end
return { found, last_c, last_r }
