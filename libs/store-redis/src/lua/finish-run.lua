-- finishRun: under the fence, records the outcome, keeps the final checkpoint (if any) and
-- marks the lease 'finished' so it is never acquired again; removes the timer. One step, so no
-- reader sees a finished run without its outcome or an outcome on a run still acquirable.
-- A run in the index enters the finished index (by finish time), which retention reads.
-- KEYS: lease, run, held, timers, checkpoints, summaries, finished
-- ARGV: prefix, runId, epoch, status, outcomeField ('result' | 'error'), outcomeValue,
--       checkpointJson ('' for none), summaryJson
-- Returns 'ok' | 'fenced'
-- The body is op_finish_run in prelude.lua, which batch.lua runs too.
return op_finish_run(KEYS, ARGV)
