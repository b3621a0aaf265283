-- reindexRuns' batch: indexes each run of the batch from its record, unless it is indexed
-- already (index_run in the prelude). Each run's entries are computed from its record in this one
-- step, so the batch is safe alongside workers changing the same runs, and running it twice
-- changes nothing.
-- KEYS: none (the runs' keys are built from the prefix, like the other indexing scripts)
-- ARGV: prefix, then run ids
-- Returns how many runs it indexed.
local prefix = ARGV[1]
local indexed = 0
for i = 2, #ARGV do
  indexed = indexed + index_run(prefix, ARGV[i])
end
return indexed
