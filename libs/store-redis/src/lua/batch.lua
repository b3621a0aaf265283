-- batch: many of the operations a worker calls once per run or per flush (claim-new-run,
-- finish-run, close-cancels, append-pointers), of many runs, in one call (batch.ts gathers them).
-- Each runs exactly as its own script would, in the order given, and answers on its own: an
-- operation that fails (a Redis error, e.g. a key of the wrong type) fails alone, with what it
-- wrote before the error kept as its own script's would be, and the next one still runs.
-- KEYS: every operation's keys, one operation after the other
-- ARGV: the number of operations n; then n triples (name, key count, argument count); then every
--       operation's arguments, one operation after the other
-- Returns for each operation {1, its reply} or {0, the error's message}
local OPS = {
  ['claim-new-run'] = op_claim_new_run,
  ['finish-run'] = op_finish_run,
  ['close-cancels'] = op_close_cancels,
  ['append-pointers'] = op_append_pointers,
}
local n = tonumber(ARGV[1])
local next_key, next_arg = 1, 2 + 3 * n
local replies = {}
for i = 1, n do
  local name, key_count, arg_count = ARGV[3 * i - 1], tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  local keys, args = {}, {}
  for k = 1, key_count do
    keys[k] = KEYS[next_key + k - 1]
  end
  for a = 1, arg_count do
    args[a] = ARGV[next_arg + a - 1]
  end
  next_key, next_arg = next_key + key_count, next_arg + arg_count
  local op = OPS[name]
  if not op then
    replies[i] = { 0, 'no batched operation named ' .. tostring(name) }
  else
    local ok, reply = pcall(op, keys, args)
    if ok then
      replies[i] = { 1, reply }
    elseif type(reply) == 'table' and reply.err then
      replies[i] = { 0, reply.err }
    else
      replies[i] = { 0, tostring(reply) }
    end
  end
end
return replies
