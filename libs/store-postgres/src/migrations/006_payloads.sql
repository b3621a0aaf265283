-- Baton store, version 6: large payloads kept by reference (claim check): a value above the
-- threshold is stored here once per (run, SHA-256 of its bytes), and the journal entry,
-- checkpoint or message carries the hash instead. Scoped by run, so they go with the run.
CREATE TABLE {{schema}}.payloads (
  run_id     text NOT NULL,
  -- Hex SHA-256 of `data`: writing the same payload twice keeps one row.
  sha256     text NOT NULL,
  data       bytea NOT NULL,
  created_at bigint NOT NULL DEFAULT {{schema}}.now_ms(),
  PRIMARY KEY (run_id, sha256)
);

-- delete_run of version 5, now also deleting the run's payloads in the same transaction. An
-- unknown run's payloads go too (a start message's input may be stored before any worker created
-- the run); an unfinished run's never.
CREATE OR REPLACE FUNCTION {{schema}}.delete_run(p_run_id text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
  v_status text;
BEGIN
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT r.status INTO v_status FROM {{schema}}.runs r WHERE r.run_id = p_run_id FOR UPDATE;
  IF v_state IS NULL AND v_status IS NULL THEN
    DELETE FROM {{schema}}.payloads p WHERE p.run_id = p_run_id;
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
  DELETE FROM {{schema}}.payloads p WHERE p.run_id = p_run_id;
  DELETE FROM {{schema}}.leases l WHERE l.run_id = p_run_id;
  DELETE FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  RETURN 'deleted';
END $$;
