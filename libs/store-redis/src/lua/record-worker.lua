-- registerWorker: writes a worker's presence record, stamped with the server instance it was
-- written on, so reapDeadWorkers can tell a worker that died from one whose connection has not
-- come back yet after the server restarted.
-- KEYS: workers
-- ARGV: workerId, clientName, nonce
-- Record: '<client name> <nonce> <server run_id>'
local instance = server_instance()
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. instance)
return 1
