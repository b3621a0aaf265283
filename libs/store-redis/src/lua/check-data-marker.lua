-- The data-loss check, at connect and after every reconnect: the marker is a random value written
-- once into a data set and never changed, so it survives exactly as long as the data does. Gone,
-- or replaced by another client that found it gone first, means the data was lost (a restart
-- without persistence, FLUSHALL). A failover to a replica keeps it: the replica has the data.
-- KEYS: data marker
-- ARGV: a fresh value, written only when there is no marker
-- Returns: { marker now in place, 1 when this call wrote it else 0, the server's run_id }
local instance = server_instance()
local marker = redis.call('GET', KEYS[1])
if marker then
  return { marker, 0, instance }
end
redis.call('SET', KEYS[1], ARGV[1])
return { ARGV[1], 1, instance }
