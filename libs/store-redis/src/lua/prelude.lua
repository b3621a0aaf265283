-- Prelude: prepended by the loader (scripts.ts) to every other script in this folder.
--
-- Lease hash fields (key <prefix>lease:<runId>):
--   epoch  fencing token, only ever grows
--   state  'held' | 'suspended' | 'paused' | 'finished'
--   owner  worker id; absent when nobody holds the lease (handed off, reaped, suspended, paused, finished)
--   exp    expiry in ms on the server clock; present exactly while state is 'held'
--   wait   JSON array of signal names a suspended run waits for
--   pause  '1' while a pause is requested of a held run (its owner stops and pauses it)
--   pause_reason  the first pause request's reason, while paused or requested
-- A paused lease is in none of the indexes below: no reaper, timer scan or acquire touches it.
--
-- Every script keeps these indexes exact, so no operation ever scans all leases:
--   <prefix>held          ZSET runId -> exp of every 'held' lease (the reaper's queue)
--   <prefix>owner:<w>     SET of runIds whose lease is 'held' with owner w (dead-worker reaping)
--   <prefix>timers        ZSET runId -> due time, only for 'suspended' leases
-- The owner set's key depends on a stored value, so scripts build it from the prefix (ARGV):
-- that is one reason this store supports a single primary, not Redis Cluster.

-- Index writes gathered across one batch.lua call; nil in every other script, where the helpers
-- below write at once. While batch.lua's operations run, the index and lease sets' ZADD and ZREM,
-- the owner sets' SADD and SREM and the counters' HINCRBY are kept here, keyed by Redis key, and
-- flush_gathered writes them at the end of the call: one command per key and kind instead of one
-- per run, so a call of a hundred claims adds to 'held' once, not a hundred times. A member's last
-- write wins (a ZADD and a ZREM of one member keep the later), counters add up, and zscore reads
-- through what is gathered, so an operation sees the writes of those before it. The script is
-- atomic, so no other client sees the sets between an operation and the flush. The server's clock
-- is read once per call too: every operation of a call happens at the same instant.
--   z: key -> { member -> score, or false for removed }   s: key -> { member -> true | false }
--   h: key -> { field -> delta }                           order: the keys, first write first
local gathered = nil

-- The server's clock in ms. Redis 5+ replicates script effects, not scripts, so reading TIME
-- before writing is allowed and replicas see the same values.
local function now_ms()
  if gathered and gathered.now then
    return gathered.now
  end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if gathered then
    gathered.now = now
  end
  return now
end

local function gather(kind, key)
  local entries = gathered[kind][key]
  if not entries then
    entries = {}
    gathered[kind][key] = entries
    gathered.order[#gathered.order + 1] = { kind, key }
  end
  return entries
end

local function zadd(key, score, member)
  if gathered then
    gather('z', key)[member] = score
  else
    redis.call('ZADD', key, score, member)
  end
end

local function zrem(key, member)
  if gathered then
    gather('z', key)[member] = false
  else
    redis.call('ZREM', key, member)
  end
end

-- ZSCORE as Redis answers it (false when absent), seeing the call's gathered writes.
local function zscore(key, member)
  if gathered then
    local entries = gathered.z[key]
    if entries and entries[member] ~= nil then
      return entries[member]
    end
  end
  return redis.call('ZSCORE', key, member)
end

local function sadd(key, member)
  if gathered then
    gather('s', key)[member] = true
  else
    redis.call('SADD', key, member)
  end
end

local function srem(key, member)
  if gathered then
    gather('s', key)[member] = false
  else
    redis.call('SREM', key, member)
  end
end

-- Adds `by` to a counter field, removing the field when its count reaches 0 or below.
local function hincr(key, field, by)
  if gathered then
    local entries = gather('h', key)
    entries[field] = (entries[field] or 0) + by
  elseif redis.call('HINCRBY', key, field, by) <= 0 then
    redis.call('HDEL', key, field)
  end
end

-- Sends `command key` with `values` (a flat list), at most 1,000 values per command (Lua's unpack
-- has a stack limit).
local function call_chunked(command, key, values)
  for first = 1, #values, 1000 do
    redis.call(command, key, unpack(values, first, math.min(first + 999, #values)))
  end
end

-- Writes what a batch.lua call gathered, and stops gathering. A counter whose deltas cancel out is
-- not written. (A counter's field is removed at 0 after the call's net delta, not after each
-- operation's: the same end state, unless the field had already drifted below 0.)
local function flush_gathered()
  local g = gathered
  gathered = nil
  for _, entry in ipairs(g.order) do
    local kind, key = entry[1], entry[2]
    local entries = g[kind][key]
    if kind == 'h' then
      for field, delta in pairs(entries) do
        if delta ~= 0 then
          hincr(key, field, delta)
        end
      end
    else
      local added, removed = {}, {}
      for member, value in pairs(entries) do
        if value == false then
          removed[#removed + 1] = member
        elseif kind == 'z' then
          added[#added + 1] = value
          added[#added + 1] = member
        else
          added[#added + 1] = member
        end
      end
      local add, rem = 'SADD', 'SREM'
      if kind == 'z' then
        add, rem = 'ZADD', 'ZREM'
      end
      call_chunked(add, key, added)
      call_chunked(rem, key, removed)
    end
  end
end

-- A number as the exact decimal string Redis stores (tostring would round to 14 digits).
local function ms(n)
  if n == math.floor(n) then
    return string.format('%d', n)
  end
  return string.format('%.17g', n)
end

-- Which server instance answers (run_id changes on every restart or failover) and since when.
local function server_instance()
  local info = redis.call('INFO', 'server')
  return string.match(info, 'run_id:(%x+)') or 'unknown', tonumber(string.match(info, 'uptime_in_seconds:(%d+)') or '0') * 1000
end

local function owner_key(prefix, owner)
  return prefix .. 'owner:' .. owner
end

-- Query indexes (listRuns, countRuns), kept by the same scripts that change a run's record, so
-- none can drift from the run it describes:
--   <prefix>index:all               ZSET runId -> createdAt of every run with a record
--   <prefix>index:status:<status>   ZSET runId -> createdAt, one per status
--   <prefix>index:workflow:<name>   ZSET runId -> createdAt, one per workflow
--   <prefix>index:counts            HASH 'status:<status>' and 'workflow:<status>:<name>' -> count
--                                   (a field is removed when its count reaches 0)
--   <prefix>index:ids               ZSET of run ids, all scored 0: ordered bytewise, so the runs
--                                   of an id prefix are one ZRANGEBYLEX away
--   <prefix>index:keys              ZSET of '<idempotency key>\0<run id>', all scored 0: the
--                                   same for an idempotency-key prefix (runs with a key only)
-- Redis orders equal scores by member, bytewise, so every set is in (createdAt, runId) order.
-- A run is indexed exactly while it is in index:all; a record from before the indexes existed is
-- indexed on its first status change or by index-runs.lua, whichever comes first.

-- Search attributes (attributes.ts; contracts/attributes.ts in @baton/core). A run's attributes are
-- fields of its record, 'attr:<name>' -> '<t>:<value>' (t: k keyword, b boolean, n number, t time in
-- ms; a number as JavaScript writes it), and 'attrs' -> ',<name>,<name>,' names them. Indexes, kept
-- by the scripts that change the record (set-attributes.lua, and the status changes below):
--   <prefix>index:attr:<name>:<t>:<value>   ZSET runId -> createdAt: the runs of a keyword or
--                                           boolean value, in the listing's order
--   <prefix>index:attrv:<name>:<t>          ZSET runId -> value: number and time attributes, for
--                                           equality and ranges
--   <prefix>index:attrc:<name>:<t>:<value>  HASH '<status>:<workflow>' -> count of the runs of a
--                                           keyword or boolean value (a field goes at 0)
-- A name holds no ':' (core checks it), so no two of these keys collide.

local function attr_counted(t)
  return t == 'k' or t == 'b'
end

local function attr_count(prefix, name, stored, status, workflow, by)
  local t = string.sub(stored, 1, 1)
  if not attr_counted(t) then
    return
  end
  hincr(prefix .. 'index:attrc:' .. name .. ':' .. stored, status .. ':' .. workflow, by)
end

-- Adds (by 1) or removes (by -1) one attribute's index entry and its count.
local function attr_index(prefix, run_id, name, stored, created_at, status, workflow, by)
  local t = string.sub(stored, 1, 1)
  if attr_counted(t) then
    local key = prefix .. 'index:attr:' .. name .. ':' .. stored
    if by > 0 then
      zadd(key, created_at, run_id)
    else
      zrem(key, run_id)
    end
    attr_count(prefix, name, stored, status, workflow, by)
  else
    local key = prefix .. 'index:attrv:' .. name .. ':' .. t
    if by > 0 then
      zadd(key, string.sub(stored, 3), run_id)
    else
      zrem(key, run_id)
    end
  end
end

-- The names in a record's 'attrs' field.
local function attr_names(attrs)
  local names = {}
  if attrs then
    for name in string.gmatch(attrs, '[^,]+') do
      names[#names + 1] = name
    end
  end
  return names
end

-- Moves the counts of a run's keyword and boolean attributes from status `from` to `to`.
local function attr_move_counts(prefix, run_key, attrs, workflow, from, to)
  for _, name in ipairs(attr_names(attrs)) do
    local stored = redis.call('HGET', run_key, 'attr:' .. name)
    if stored then
      attr_count(prefix, name, stored, from, workflow, -1)
      attr_count(prefix, name, stored, to, workflow, 1)
    end
  end
end

-- Removes every attribute index entry and count of a run whose record is about to go.
local function attr_unindex(prefix, run_key, run_id, attrs, status, workflow)
  for _, name in ipairs(attr_names(attrs)) do
    local stored = redis.call('HGET', run_key, 'attr:' .. name)
    if stored then
      attr_index(prefix, run_id, name, stored, 0, status, workflow, -1)
    end
  end
end

local function count_run(prefix, status, workflow, by)
  local counts_key = prefix .. 'index:counts'
  hincr(counts_key, 'status:' .. status, by)
  hincr(counts_key, 'workflow:' .. status .. ':' .. workflow, by)
end

-- The prefix indexes of a run (index:ids, index:keys); adding twice changes nothing.
local function index_prefixes(prefix, run_id, idempotency_key)
  zadd(prefix .. 'index:ids', 0, run_id)
  if idempotency_key and idempotency_key ~= '' then
    zadd(prefix .. 'index:keys', 0, idempotency_key .. '\0' .. run_id)
  end
end

local function index_add(prefix, run_id, status, workflow, created_at, idempotency_key)
  index_prefixes(prefix, run_id, idempotency_key)
  zadd(prefix .. 'index:all', created_at, run_id)
  zadd(prefix .. 'index:status:' .. status, created_at, run_id)
  zadd(prefix .. 'index:workflow:' .. workflow, created_at, run_id)
  count_run(prefix, status, workflow, 1)
end

-- Indexes the run as its record stands, unless it is indexed already. Returns 1 when it added it.
-- A run indexed before the prefix indexes existed (index version 1) gets those alone.
local function index_run(prefix, run_id)
  local run = redis.call('HMGET', prefix .. 'run:' .. run_id, 'status', 'workflow', 'createdAt', 'idempotencyKey')
  if not run[1] then
    return 0
  end
  if zscore(prefix .. 'index:all', run_id) then
    index_prefixes(prefix, run_id, run[4])
    return 0
  end
  index_add(prefix, run_id, run[1], run[2], run[3], run[4])
  return 1
end

-- Moves an existing record's index entries to `status`; call it before writing the status.
-- Returns false, changing nothing, when the run has no record, else true.
local function index_status(prefix, run_key, run_id, status)
  local run = redis.call('HMGET', run_key, 'status', 'workflow', 'createdAt', 'idempotencyKey', 'attrs')
  if not run[1] then
    return false
  end
  if not zscore(prefix .. 'index:all', run_id) then
    index_add(prefix, run_id, status, run[2], run[3], run[4])
  elseif run[1] ~= status then
    local created_at = run[3]
    zrem(prefix .. 'index:status:' .. run[1], run_id)
    zadd(prefix .. 'index:status:' .. status, created_at, run_id)
    count_run(prefix, run[1], run[2], -1)
    count_run(prefix, status, run[2], 1)
    if run[5] then
      attr_move_counts(prefix, run_key, run[5], run[2], run[1], status)
    end
  end
  return true
end

-- Removes the run's index entries (the record is about to go).
local function unindex_run(prefix, run_id)
  if not zscore(prefix .. 'index:all', run_id) then
    return
  end
  local run = redis.call('HMGET', prefix .. 'run:' .. run_id, 'status', 'workflow', 'idempotencyKey', 'attrs')
  if run[4] then
    attr_unindex(prefix, prefix .. 'run:' .. run_id, run_id, run[4], run[1], run[2])
  end
  zrem(prefix .. 'index:all', run_id)
  zrem(prefix .. 'index:ids', run_id)
  if run[3] then
    zrem(prefix .. 'index:keys', run[3] .. '\0' .. run_id)
  end
  if run[1] then
    zrem(prefix .. 'index:status:' .. run[1], run_id)
    zrem(prefix .. 'index:workflow:' .. run[2], run_id)
    count_run(prefix, run[1], run[2], -1)
  end
end

-- Marks the run's index record with a status, if the run is in the index at all (a lease may
-- exist without a record: the contract allows claiming runs the index never saw).
local function set_run_status(prefix, run_key, run_id, status, now)
  if redis.call('EXISTS', run_key) == 1 then
    index_status(prefix, run_key, run_id, status)
    redis.call('HSET', run_key, 'status', status, 'updatedAt', ms(now))
  end
end

-- Held by nobody and already expired: any worker may acquire it at once, and if the wake or
-- resume message is lost the reaper finds it like any expired lease. Removes the timer.
local function make_acquirable(prefix, lease_key, held_key, timers_key, run_id, now)
  local owner = redis.call('HGET', lease_key, 'owner')
  if owner then
    srem(owner_key(prefix, owner), run_id)
  end
  redis.call('HSET', lease_key, 'state', 'held', 'exp', ms(now))
  redis.call('HDEL', lease_key, 'owner', 'wait')
  zadd(held_key, ms(now), run_id)
  zrem(timers_key, run_id)
end

-- Paused: no owner, no expiry, no timer, no pause request; the record (if any) 'paused'. A lease
-- that was ever held moves to the next epoch, so its last holder's late writes are fenced.
local function pause_lease(prefix, lease_key, held_key, timers_key, run_key, run_id, now)
  local epoch = tonumber(redis.call('HGET', lease_key, 'epoch') or '0') or 0
  if epoch > 0 then
    redis.call('HSET', lease_key, 'epoch', ms(epoch + 1))
  end
  local owner = redis.call('HGET', lease_key, 'owner')
  if owner then
    srem(owner_key(prefix, owner), run_id)
  end
  redis.call('HSET', lease_key, 'state', 'paused')
  redis.call('HDEL', lease_key, 'owner', 'exp', 'wait', 'pause')
  zrem(held_key, run_id)
  zrem(timers_key, run_id)
  set_run_status(prefix, run_key, run_id, 'paused', now)
end

-- Creates the run record unless its id or its idempotency key is known. Returns 1 and the record
-- it wrote when it created one, or 0 and the existing record (both as HGETALL pairs).
-- fields: runId, workflow, version, inputJson, idempotencyKey ('' = none), traceparent ('' = none),
-- forkedFromJson ('' = none). `status` (default 'pending') and `now` (default the server's clock)
-- are the new record's; a run created 'running' is on its first attempt. `absent`: the caller
-- has just seen that the record does not exist (its existence is not asked again).
local function create_run(run_key, key_key, prefix, f, status, now, absent)
  if not absent and redis.call('EXISTS', run_key) == 1 then
    return 0, redis.call('HGETALL', run_key)
  end
  if key_key then
    local existing_id = redis.call('GET', key_key)
    if existing_id then
      local existing = redis.call('HGETALL', prefix .. 'run:' .. existing_id)
      if #existing > 0 then
        return 0, existing
      end
    end
  end
  status = status or 'pending'
  local at = ms(now or now_ms())
  -- One HSET with every field the run has.
  local fields = { 'runId', f[1], 'workflow', f[2], 'version', f[3], 'input', f[4], 'status', status,
    'createdAt', at, 'updatedAt', at, 'attempts', status == 'running' and '1' or '0' }
  if f[6] ~= nil and f[6] ~= '' then
    fields[#fields + 1] = 'traceparent'
    fields[#fields + 1] = f[6]
  end
  if key_key then
    fields[#fields + 1] = 'idempotencyKey'
    fields[#fields + 1] = f[5]
  end
  if f[7] ~= nil and f[7] ~= '' then
    fields[#fields + 1] = 'forkedFrom'
    fields[#fields + 1] = f[7]
  end
  redis.call('HSET', run_key, unpack(fields))
  if key_key then
    redis.call('SET', key_key, f[1])
  end
  index_add(prefix, f[1], status, f[2], at, key_key and f[5] or nil)
  return 1, fields
end

-- Takes the run's lease with epoch = previous + 1 until now + ttl.
-- Returns {'ok', epoch, cancelRequested 0|1} | {'held', owner, exp} | {'finished'} | {'paused'}
local function take_lease(lease_key, held_key, timers_key, run_key, cancel_key, prefix, run_id, owner, ttl)
  local now = now_ms()
  local lease = redis.call('HMGET', lease_key, 'state', 'owner', 'exp', 'epoch')
  local state, current_owner, exp, epoch = lease[1], lease[2], lease[3], lease[4]
  if state == 'finished' then
    return { 'finished' }
  end
  if state == 'paused' then
    return { 'paused' }
  end
  -- An ownerless held lease (handed off or reaped) is free even though the reaper moved its
  -- expiry on: that expiry only paces the reaper.
  if state == 'held' and current_owner and tonumber(exp) > now then
    return { 'held', current_owner, exp }
  end
  -- Free, but its owner was asked to pause and died (or handed it off) before it stopped.
  if state and redis.call('HGET', lease_key, 'pause') then
    pause_lease(prefix, lease_key, held_key, timers_key, run_key, run_id, now)
    return { 'paused' }
  end

  if current_owner then
    srem(owner_key(prefix, current_owner), run_id)
  end
  local next_epoch = (tonumber(epoch) or 0) + 1
  local expires = now + ttl
  redis.call('HSET', lease_key, 'epoch', ms(next_epoch), 'state', 'held', 'owner', owner, 'exp', ms(expires))
  redis.call('HDEL', lease_key, 'wait')
  zadd(held_key, ms(expires), run_id)
  sadd(owner_key(prefix, owner), run_id)
  zrem(timers_key, run_id)
  if redis.call('EXISTS', run_key) == 1 then
    set_run_status(prefix, run_key, run_id, 'running', now)
    redis.call('HINCRBY', run_key, 'attempts', 1)
  end
  return { 'ok', next_epoch, redis.call('EXISTS', cancel_key) }
end

-- Group logs' retention (journal-index.ts, contracts/group-journal.ts):
--   <prefix>glogs        HASH log -> the newest record a pointer into that log was accepted for
--   <prefix>glog:<log>   ZSET runId -> the lowest record the run's pointers name in that log
-- A log's lowest score is the oldest record a kept run needs. Records only grow within a log.
-- (batch.lua's append-pointers writes them.)

-- Releases what a run's pointers name (its list is '<record>:<log>' elements, or '!own').
local function release_pointers(prefix, run_id)
  for _, pointer in ipairs(redis.call('LRANGE', prefix .. 'jptr:' .. run_id, 0, -1)) do
    local colon = string.find(pointer, ':', 1, true)
    if colon then
      redis.call('ZREM', prefix .. 'glog:' .. string.sub(pointer, colon + 1), run_id)
    end
  end
end

-- Removes a finished run's keys (`data_keys`), its idempotency key while that still names it, and
-- its entries in the held, timers, finished and query indexes: the one way delete-run and the
-- retention sweep's delete-expired-runs drop a run, so neither can leave a key the other removes.
local function drop_run(prefix, run_id, idempotency_key, data_keys, held_key, timers_key, finished_key)
  unindex_run(prefix, run_id)
  release_pointers(prefix, run_id)
  -- The run's durable promises (promises.ts) go with it: their tokens name nothing any more.
  local promises_key = prefix .. 'run-promises:' .. run_id
  for _, token in ipairs(redis.call('ZRANGEBYSCORE', promises_key, '-inf', '+inf')) do
    redis.call('DEL', prefix .. 'promise:' .. token)
  end
  redis.call('DEL', promises_key)
  if idempotency_key then
    local idem_key = prefix .. 'idem:' .. idempotency_key
    if redis.call('GET', idem_key) == run_id then
      redis.call('DEL', idem_key)
    end
  end
  redis.call('DEL', unpack(data_keys))
  -- The run's updates (updates.ts): built here, so both deletions drop them.
  redis.call('DEL', prefix .. 'upd:' .. run_id, prefix .. 'upd-order:' .. run_id, prefix .. 'upd-kept:' .. run_id)
  redis.call('ZREM', held_key, run_id)
  redis.call('ZREM', timers_key, run_id)
  redis.call('ZREM', finished_key, run_id)
end

-- Concurrency slots per key (contracts/concurrency.ts in @baton/core):
--   <prefix>slot:<key>        ZSET runId -> order taken: the runs holding a slot
--   <prefix>slot-wait:<key>   ZSET runId -> arrival number: the line, oldest first
--   <prefix>slot-seq          HASH, field n: the arrival counter
-- Forgets holders whose run is finished or gone, then hands free slots to the line's head; a
-- run handed one gets its timer due now while its lease is suspended (the timers index holds
-- suspended leases only), so the timer scan wakes it if the caller's wake message is lost.
-- Returns the runs handed a slot.
local function settle_slots(prefix, holders_key, waiting_key, timers_key, limit)
  local function live(run_id)
    local status = redis.call('HGET', prefix .. 'run:' .. run_id, 'status')
    return status and status ~= 'completed' and status ~= 'failed' and status ~= 'cancelled'
  end
  for _, holder in ipairs(redis.call('ZRANGEBYSCORE', holders_key, '-inf', '+inf')) do
    if not live(holder) then
      redis.call('ZREM', holders_key, holder)
    end
  end
  local woken = {}
  local now = now_ms()
  while redis.call('ZCARD', holders_key) < limit do
    local head = redis.call('ZRANGEBYSCORE', waiting_key, '-inf', '+inf', 'LIMIT', 0, 1)[1]
    if not head then break end
    redis.call('ZREM', waiting_key, head)
    -- A run that finished while it waited leaves the line instead, and so does a paused one (it
    -- joins the line again when resumed): neither could use the slot.
    if live(head) and redis.call('HGET', prefix .. 'run:' .. head, 'status') ~= 'paused' then
      redis.call('ZADD', holders_key, now, head)
      if redis.call('HGET', prefix .. 'lease:' .. head, 'state') == 'suspended' then
        redis.call('ZADD', timers_key, now, head)
      end
      woken[#woken + 1] = head
    end
  end
  return woken
end
