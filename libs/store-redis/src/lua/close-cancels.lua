-- closeCancels: the owner's fenced step before it journals a completed or failed end. A cancel
-- already requested is answered (the run ends cancelled instead) and nothing changes; otherwise
-- the lease records that its current epoch closed the run's cancels, so request-cancel.lua answers
-- too late from here on. A later epoch (a new owner) accepts cancels again without clearing it.
-- KEYS: lease, cancel
-- ARGV: epoch
-- Returns {'fenced'} | {'cancel-requested', flag} | {'closed'}
-- The body is op_close_cancels in prelude.lua, which batch.lua runs too.
return op_close_cancels(KEYS, ARGV)
