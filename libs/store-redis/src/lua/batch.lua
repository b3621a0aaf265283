-- batch: many of the operations a worker calls once per run or per flush (a new run's claim, the
-- closing of its cancels, its finish, group commit's pointers), of many runs, in one call
-- (batch.ts gathers them). Each runs exactly as the prelude's op_* function documents, in the
-- order given, and answers on its own: an operation that fails (a Redis error, e.g. a key of the
-- wrong type) fails alone, with what it wrote before the error kept, and the next one still runs.
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
-- Returns for each operation {1, its reply} or {0, the error's message}
local prefix = ARGV[1]
local n = tonumber(ARGV[2])

-- Each takes the operation's arguments (a table) and returns the op function and what it takes:
-- its keys and arguments, or for append-pointers the prefix and the arguments as given.
local FORMS = {
  ['claim-new-run'] = function(a)
    local id = a[2]
    local keys = { prefix .. 'run:' .. id, prefix .. 'lease:' .. id, prefix .. 'held', prefix .. 'timers',
      prefix .. 'cancel:' .. id }
    if a[1] == '1' then
      keys[6] = prefix .. 'idem:' .. a[6]
    end
    return op_claim_new_run, keys, { prefix, a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9] }
  end,
  ['finish-run'] = function(a)
    local id = a[1]
    local keys = { prefix .. 'lease:' .. id, prefix .. 'run:' .. id, prefix .. 'held', prefix .. 'timers',
      prefix .. 'ckpt:' .. id, prefix .. 'ckpt-sum:' .. id, prefix .. 'finished' }
    return op_finish_run, keys, { prefix, a[1], a[2], a[3], a[4], a[5], a[6], a[7] }
  end,
  ['close-cancels'] = function(a)
    return op_close_cancels, { prefix .. 'lease:' .. a[1], prefix .. 'cancel:' .. a[1] }, { a[2] }
  end,
  ['append-pointers'] = function(a)
    return op_append_pointers, prefix, a
  end,
}

-- Runs one operation: its form gives the op function and what it takes.
local function run_form(form, a)
  local op, first, second = form(a)
  return op(first, second)
end

local next_arg = 3 + 2 * n
local replies = {}
gathered = { z = {}, s = {}, h = {}, order = {} }
for i = 1, n do
  local name, count = ARGV[1 + 2 * i], tonumber(ARGV[2 + 2 * i])
  local a = {}
  for j = 1, count do
    a[j] = ARGV[next_arg + j - 1]
  end
  next_arg = next_arg + count
  local form = FORMS[name]
  if not form then
    replies[i] = { 0, 'no batched operation named ' .. tostring(name) }
  else
    local ok, reply = pcall(run_form, form, a)
    if ok then
      replies[i] = { 1, reply }
    elseif type(reply) == 'table' and reply.err then
      replies[i] = { 0, reply.err }
    else
      replies[i] = { 0, tostring(reply) }
    end
  end
end
flush_gathered()
return replies
