-- Baton store, version 8: failed claims in a row (docs/operations.md, "A run failed after repeated
-- resume failures"). A worker whose resume of a run threw records the failure under its claim's
-- epoch; the count carries on from a failure recorded under the epoch before and starts at 1
-- otherwise, so a claim that went well in between (and wrote nothing for it) breaks the chain.
ALTER TABLE {{schema}}.leases
  ADD COLUMN failed_epoch bigint,
  ADD COLUMN failed_claims integer NOT NULL DEFAULT 0;

-- Returns the number of failed claims in a row, this one included, or NULL when p_epoch is not the
-- lease's epoch or the run is finished (the fence). The same epoch twice counts once.
CREATE FUNCTION {{schema}}.record_claim_failure(p_run_id text, p_epoch bigint)
RETURNS integer
LANGUAGE sql AS $$
  UPDATE {{schema}}.leases l
  SET failed_claims = CASE
        WHEN l.failed_epoch = p_epoch THEN l.failed_claims
        WHEN l.failed_epoch = p_epoch - 1 THEN l.failed_claims + 1
        ELSE 1
      END,
      failed_epoch = p_epoch
  WHERE l.run_id = p_run_id AND l.epoch = p_epoch AND l.state <> 'finished'
  RETURNING l.failed_claims
$$;
