-- deleteExpiredRuns: the retention sweep's batch in one step. Takes up to `limit` of the oldest
-- runs of the finished index whose finish is at least olderThanMs ago and deletes each exactly as
-- delete-run.lua does (only while the record is finished and the lease is 'finished'; anything
-- else is left as it is), then leaves a tombstone '<prefix>deleted:<runId>' = deletion time that Redis expires after tombstoneMs.
-- A script runs alone, so two sweeps calling it at once take disjoint runs: the second finds the
-- first's runs gone from the index. Tombstones expire by themselves, so there is nothing to drop.
-- Keys are built from the prefix (ARGV) because the batch's runs are only known here.
-- KEYS: finished, held, timers
-- ARGV: prefix, olderThanMs, limit, tombstoneMs
-- Returns the deleted run ids.
local finished_key, held_key, timers_key = KEYS[1], KEYS[2], KEYS[3]
local prefix, older_than, limit, tombstone_ms =
  ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

local now = now_ms()
local candidates = redis.call('ZRANGEBYSCORE', finished_key, '-inf', ms(now - older_than), 'LIMIT', 0, limit)
local deleted = {}
for _, run_id in ipairs(candidates) do
  local run_key, lease_key = prefix .. 'run:' .. run_id, prefix .. 'lease:' .. run_id
  local run = redis.call('HMGET', run_key, 'status', 'idempotencyKey')
  local lease_state = redis.call('HGET', lease_key, 'state')
  local status = run[1]
  local finished = (status == 'completed' or status == 'failed' or status == 'cancelled')
    and (not lease_state or lease_state == 'finished')
  if not status and not lease_state then
    -- Known to the index only (deleted by id meanwhile): the entry is stale.
    redis.call('ZREM', finished_key, run_id)
  elseif finished then
    drop_run(prefix, run_id, run[2], { lease_key, run_key, prefix .. 'cancel:' .. run_id,
      prefix .. 'ckpt:' .. run_id, prefix .. 'ckpt-sum:' .. run_id, prefix .. 'inbox:' .. run_id,
      prefix .. 'signal-ids:' .. run_id, prefix .. 'payload:' .. run_id, prefix .. 'jptr:' .. run_id }, held_key,
      timers_key, finished_key)
    redis.call('SET', prefix .. 'deleted:' .. run_id, ms(now), 'PX', ms(tombstone_ms))
    deleted[#deleted + 1] = run_id
  end
end
return deleted
