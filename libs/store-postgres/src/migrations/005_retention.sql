-- Baton store, version 5: retention of finished runs (docs/retention.md).
-- Finished runs by finish time (updated_at does not change once a run is finished): the sweep's
-- scan reads the oldest first and never touches a row of an unfinished run.
CREATE INDEX runs_finished_by_update ON {{schema}}.runs (updated_at)
  WHERE status IN ('completed', 'failed', 'cancelled');

-- Deletes everything of a finished run in one transaction, under the row locks of its lease and
-- record (lease first, as finish_run and the reopen take them), so a run reopened or still going
-- is never touched. Returns 'deleted', 'unknown', or the status that kept the run.
CREATE FUNCTION {{schema}}.delete_run(p_run_id text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
  v_status text;
BEGIN
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT r.status INTO v_status FROM {{schema}}.runs r WHERE r.run_id = p_run_id FOR UPDATE;
  IF v_state IS NULL AND v_status IS NULL THEN
    RETURN 'unknown';
  END IF;
  IF v_status IS NOT NULL AND v_status NOT IN ('completed', 'failed', 'cancelled') THEN
    RETURN v_status;
  END IF;
  IF v_state IS NOT NULL AND v_state <> 'finished' THEN
    RETURN CASE WHEN v_state = 'held' THEN 'running' ELSE v_state END;
  END IF;
  DELETE FROM {{schema}}.checkpoints c WHERE c.run_id = p_run_id;
  DELETE FROM {{schema}}.signals s WHERE s.run_id = p_run_id;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
  DELETE FROM {{schema}}.cancel_requests x WHERE x.run_id = p_run_id;
  DELETE FROM {{schema}}.leases l WHERE l.run_id = p_run_id;
  DELETE FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  RETURN 'deleted';
END $$;
