-- batch: many of the operations a worker calls once per run or per flush (a new run's claim, the
-- closing of its cancels, its finish, group commit's pointers), of many runs, in one call
-- (batch.ts gathers them). Each runs as its op_* function below documents, in the order given, and
-- answers on its own: an operation that fails (a Redis error, e.g. a key of the wrong type) fails
-- alone, with what it wrote before the error kept, and the next one still runs.
-- The keys are built here from the prefix and each run's id (keys.ts has the same layout), so a
-- call carries no key twice: the store serves a single primary (prelude.lua), never a cluster.
-- The operations' index writes (the status, workflow and id indexes, 'held', 'timers', 'finished',
-- the owner sets, the counts) are gathered and written once per key at the end (prelude.lua,
-- `gathered`), also when an operation failed: what it wrote before its error is kept, as above.
-- Those keys are shared by every run, so one of the wrong type (a damaged store) fails the whole
-- call at its end: every operation of it gets that error, with what each wrote before kept, as
-- when a call fails as a whole (batch.ts); nothing is retried.
-- ARGV: prefix, the number of operations n, then n pairs (name, argument count), then every
--       operation's arguments, one operation after the other:
--   claim-new-run   hasKey, runId, workflow, version, inputJson, idempotencyKey, traceparent, owner, ttlMs
--   finish-run      runId, epoch, status, outcomeField, outcomeValue, checkpointJson, summaryJson
--   close-cancels   runId, epoch
--   append-pointers log, record, then for each append: runId, expected, expected last pointer
-- Returns for each operation its reply, or an error reply ({err = message}; ioredis hands it over
-- as a ReplyError in its place in the array).
--
-- Every op_* function takes the prefix and `b`, the index in ARGV just before its first argument
-- (its k-th argument is ARGV[b + k]), and append-pointers also its argument count: the arguments
-- are read where Redis put them, with no table per operation, since a call's fixed cost per
-- operation is a good part of what a run costs Redis (docs/performance.md, "Round four").
local prefix = ARGV[1]

-- claimNewRun: createRun and, only when that created the run, acquireLease for the worker, in one
-- step: what a worker does with a start message, in one round trip instead of two.
-- Arguments: hasKey '1'|'0', runId, workflow, version, inputJson, idempotencyKey, traceparent
--   ('' = none), owner, ttlMs
-- Returns {2, createdAt} when it created the run 'running' under a first lease (epoch 1, no cancel
-- requested): the record is the one the worker sent, with createdAt = updatedAt = that time and one
-- attempt, so it is not sent back. Otherwise {0, the existing record as HGETALL pairs} |
-- {1, the record after the lease as HGETALL pairs, lease reply (see take_lease)}.
local function op_claim_new_run(b)
  local run_id, owner, ttl = ARGV[b + 2], ARGV[b + 8], tonumber(ARGV[b + 9])
  local run_key, lease_key = prefix .. 'run:' .. run_id, prefix .. 'lease:' .. run_id
  local key_key = nil
  if ARGV[b + 1] == '1' then
    key_key = prefix .. 'idem:' .. ARGV[b + 6]
  end
  local fields = { run_id, ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6], ARGV[b + 7], '' }
  -- A run with neither a lease nor a record yet (every new run's case; one EXISTS asks for both):
  -- created 'running' under a first lease in one go, so its record never passes through 'pending'
  -- in the indexes; the same outcome as create_run then take_lease, which the general path below
  -- still takes (for a known run too, whose record create_run answers).
  if redis.call('EXISTS', lease_key, run_key) == 0 then
    local now = now_ms()
    local created, record = create_run(run_key, key_key, prefix, fields, 'running', now, true)
    if created == 0 then
      return { 0, record }
    end
    local expires = ms(now + ttl)
    redis.call('HSET', lease_key, 'epoch', '1', 'state', 'held', 'owner', owner, 'exp', expires)
    zadd(prefix .. 'held', expires, run_id)
    sadd(owner_key(prefix, owner), run_id)
    -- No cancel can be requested yet: request-cancel.lua sets the flag only for a run with a record
    -- or a lease, and deleting a run deletes its flag.
    return { 2, ms(now) }
  end
  local created, existing = create_run(run_key, key_key, prefix, fields)
  if created == 0 then
    return { 0, existing }
  end
  local lease = take_lease(lease_key, prefix .. 'held', prefix .. 'timers', run_key, prefix .. 'cancel:' .. run_id,
    prefix, run_id, owner, ttl)
  return { 1, redis.call('HGETALL', run_key), lease }
end

-- finishRun: under the fence, records the outcome, keeps the final checkpoint (if any) and
-- marks the lease 'finished' so it is never acquired again; removes the timer. One step, so no
-- reader sees a finished run without its outcome or an outcome on a run still acquirable.
-- A run in the index enters the finished index (by finish time), which retention reads.
-- Arguments: runId, epoch, status, outcomeField ('result' | 'error'), outcomeValue,
--   checkpointJson ('' for none), summaryJson
-- Returns 'ok' | 'fenced'
local function op_finish_run(b)
  local run_id, epoch, status = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
  local lease_key, run_key = prefix .. 'lease:' .. run_id, prefix .. 'run:' .. run_id
  local lease = redis.call('HMGET', lease_key, 'state', 'epoch', 'owner')
  if not lease[1] or lease[1] == 'finished' or lease[2] ~= epoch then
    return 'fenced'
  end
  local now = ms(now_ms())
  if index_status(prefix, run_key, run_id, status) then
    redis.call('HSET', run_key, 'status', status, ARGV[b + 4], ARGV[b + 5], 'updatedAt', now)
    zadd(prefix .. 'finished', now, run_id)
  end
  local checkpoint = ARGV[b + 6]
  if checkpoint ~= '' then
    redis.call('RPUSH', prefix .. 'ckpt:' .. run_id, checkpoint)
    redis.call('RPUSH', prefix .. 'ckpt-sum:' .. run_id, ARGV[b + 7])
  end
  if lease[3] then
    srem(owner_key(prefix, lease[3]), run_id)
  end
  -- A pause asked of a run that finished before it stopped for it is moot.
  redis.call('HDEL', lease_key, 'pause', 'pause_reason', 'owner', 'exp', 'wait')
  redis.call('HSET', lease_key, 'state', 'finished')
  zrem(prefix .. 'held', run_id)
  -- Only a suspended lease is in the timers index.
  if lease[1] ~= 'held' then
    zrem(prefix .. 'timers', run_id)
  end
  return 'ok'
end

-- closeCancels: the owner's fenced step before it journals a completed or failed end. A cancel
-- already requested is answered (the run ends cancelled instead) and nothing changes; otherwise
-- the lease records that its current epoch closed the run's cancels, so request-cancel.lua answers
-- too late from here on. A later epoch (a new owner) accepts cancels again without clearing it.
-- Arguments: runId, epoch
-- Returns {'fenced'} | {'cancel-requested', flag} | {'closed'}
local function op_close_cancels(b)
  local run_id, epoch = ARGV[b + 1], ARGV[b + 2]
  local lease_key = prefix .. 'lease:' .. run_id
  local lease = redis.call('HMGET', lease_key, 'state', 'epoch')
  if lease[1] ~= 'held' or lease[2] ~= epoch then
    return { 'fenced' }
  end
  local flag = redis.call('GET', prefix .. 'cancel:' .. run_id)
  if flag then
    return { 'cancel-requested', flag }
  end
  redis.call('HSET', lease_key, 'closed', epoch)
  return { 'closed' }
end

-- Pushes an accepted pointer (`pointer`, '<record>:<log>') onto the run's list (`key`) and returns
-- the run's count. `previous` is the list's last element before it (false for an empty list):
-- records only grow within a log, so the run's retention entry (prelude.lua, "Group logs'
-- retention") needs writing only at its first pointer into a log, when `previous` does not end
-- with `suffix` (':<log>'; a record holds no ':').
local function push_pointer(key, run_id, previous, log, record, pointer, suffix)
  local count = redis.call('RPUSH', key, pointer)
  if not previous or #previous <= #suffix or not string.find(previous, suffix, #previous - #suffix + 1, true) then
    redis.call('ZADD', prefix .. 'glog:' .. log, 'LT', record, run_id)
  end
  return count
end

-- Notes `record` as the newest accepted into `log` ('glogs'), unless a newer one is known.
local function newest_record_seen(log, record)
  local known = redis.call('HGET', prefix .. 'glogs', log)
  if not known or tonumber(record) > tonumber(known) then
    redis.call('HSET', prefix .. 'glogs', log, record)
  end
end

-- appendPointers: group commit's pointers for many runs in one step (contracts/group-journal.ts).
-- A run's pointers are the list '<prefix>jptr:<runId>', element i the pointer at position
-- base + i + 1 as '<record>:<log>'; a run journaled on its own holds the single element '!own'.
-- Each run's append is decided on its own: a new run's first append (expected '0') starts its list;
-- a fence marker (expected '') to a run with no list marks it as its own; a run of its own is never
-- grouped; otherwise the pointer goes after the last one when the expected position is the last
-- (or none was given), else it is refused with the last position.
-- An accepted pointer is counted in the group log's retention indexes (prelude.lua).
-- Arguments (`count` of them): the log and the record every pointer of the call names, then for
--   each append three values: the run's id, expected ('' for none, else the position's offset from
--   the base, '0' for an empty journal, or 'x' for a position of the run's own journal), and the
--   pointer expected last as '<record>:<log>' when the writer knows it ('' when not;
--   expectedLastPointer in contracts/group-journal.ts).
-- Returns for each append an integer: the run's count after it, when appended (at least 1); minus
-- the run's count, on a conflict (at most -1: a conflict needs a pointer); 0 when not grouped.
--
-- An append whose writer sent the pointer it expects last (the common case: the next pointer of a
-- grouped run) costs two commands: LINDEX of the last element, which is that pointer exactly when
-- nobody appended after it (a run's pointers never repeat), and RPUSH, whose reply is the count.
-- Without the hint, or when it does not match, the count is read as well (LLEN), and the last
-- element says whether the run is journaled on its own (its list is the single '!own'). A run's
-- pointers name records that only grow within a log, so the retention index needs the run's entry
-- only at its first pointer into a log (push_pointer), not at every pointer.
local function op_append_pointers(b, count)
  local log, record = ARGV[b + 1], ARGV[b + 2]
  local pointer, suffix = record .. ':' .. log, ':' .. log
  local results = {}
  local accepted = false
  for i = b + 3, b + count, 3 do
    local run_id, expected, hint = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local key = prefix .. 'jptr:' .. run_id
    local last = hint ~= '' and redis.call('LINDEX', key, -1)
    local result
    if last and last == hint then
      result = push_pointer(key, run_id, last, log, record, pointer, suffix)
    else
      local length = redis.call('LLEN', key)
      if length == 0 then
        if expected == '0' then
          result = push_pointer(key, run_id, false, log, record, pointer, suffix)
        else
          -- A fence marker (expected '') to a run with no list marks it as its own.
          if expected == '' then
            redis.call('RPUSH', key, '!own')
          end
          result = 0
        end
      else
        last = last or redis.call('LINDEX', key, -1)
        if last == '!own' then
          result = 0
        elseif expected ~= '' and expected ~= tostring(length) then
          result = -length
        else
          result = push_pointer(key, run_id, last, log, record, pointer, suffix)
        end
      end
    end
    if result > 0 then
      accepted = true
    end
    results[#results + 1] = result
  end
  if accepted then
    newest_record_seen(log, record)
  end
  return results
end

local OPS = {
  ['claim-new-run'] = op_claim_new_run,
  ['finish-run'] = op_finish_run,
  ['close-cancels'] = op_close_cancels,
  ['append-pointers'] = op_append_pointers,
}

local n = tonumber(ARGV[2])
local b = 2 + 2 * n
local replies = {}
gathered = { z = {}, s = {}, h = {}, order = {} }
for i = 1, n do
  local name, count = ARGV[1 + 2 * i], tonumber(ARGV[2 + 2 * i])
  local op = OPS[name]
  if not op then
    replies[i] = { err = 'no batched operation named ' .. tostring(name) }
  else
    local ok, reply = pcall(op, b, count)
    if not ok then
      -- redis.call's errors are tables with err (Redis 7); anything else is a Lua error's message.
      if type(reply) ~= 'table' or not reply.err then
        reply = { err = tostring(reply) }
      end
    end
    replies[i] = reply
  end
  b = b + count
end
flush_gathered()
return replies
