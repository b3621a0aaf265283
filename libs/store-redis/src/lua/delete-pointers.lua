-- deletePointers: forgets a run's pointers (or its '!own' mark) and releases what they named in
-- the group logs' retention indexes (prelude.lua), in one step.
-- KEYS: the run's pointer list
-- ARGV: prefix, runId
release_pointers(ARGV[1], ARGV[2])
redis.call('DEL', KEYS[1])
return 1
