-- reapDeadWorkers: for workers the caller found without a presence connection (CLIENT LIST
-- cannot run inside a script), reaps their held leases as reapExpiredLeases does, at most
-- `limit` in all, and forgets a worker once none of its held leases remain.
-- Skipped, because they may well be alive:
-- - a worker whose record changed since the caller read it: it re-registered in between;
-- - while the server instance is younger than graceMs, or was first scanned less than graceMs
--   ago, a worker registered on an earlier instance: after a restart or failover every connection
--   is new, and a live worker's presence connection may simply not have reconnected yet. A replica
--   promoted by Sentinel has run for long (its uptime says nothing), hence the second clock: the
--   presence-instance hash remembers the instance the last scan ran on and when it first did.
-- KEYS: workers (hash workerId -> '<client name> <nonce> <server run_id>'),
--       presence-instance (hash: instance, since)
-- ARGV: prefix, limit, reclaimAfterMs, graceMs, then pairs: workerId, record as read
-- Returns the reaped run ids.
local workers_key = KEYS[1]
local prefix, limit, reclaim, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local instance, uptime_ms = server_instance()
local now = now_ms()
local known = redis.call('HMGET', KEYS[2], 'instance', 'since')
local since = tonumber(known[2])
if known[1] ~= instance or since == nil then
  since = now
  redis.call('HSET', KEYS[2], 'instance', instance, 'since', since)
end
local settling = uptime_ms < grace or now - since < grace
local next_exp = ms(now + reclaim)
local held_key = prefix .. 'held'
local reaped = {}
for i = 5, #ARGV - 1, 2 do
  local worker, seen = ARGV[i], ARGV[i + 1]
  local recorded_on = string.match(seen, '^%S+ %S+ (%S+)$')
  local may_be_reconnecting = settling and recorded_on ~= instance
  if redis.call('HGET', workers_key, worker) == seen and not may_be_reconnecting then
    local owned_key = owner_key(prefix, worker)
    local room = limit - #reaped
    if room > 0 then
      for _, run_id in ipairs(redis.call('SRANDMEMBER', owned_key, room)) do
        local lease_key = prefix .. 'lease:' .. run_id
        local lease = redis.call('HMGET', lease_key, 'state', 'owner')
        if lease[1] == 'held' and lease[2] == worker then
          redis.call('HDEL', lease_key, 'owner')
          redis.call('HSET', lease_key, 'exp', next_exp)
          redis.call('ZADD', held_key, next_exp, run_id)
          reaped[#reaped + 1] = run_id
        end
        redis.call('SREM', owned_key, run_id)
      end
    end
    if redis.call('SCARD', owned_key) == 0 then
      redis.call('HDEL', workers_key, worker)
    end
  end
end
return reaped
