-- Baton store, version 9: the retention sweep deletes in batches and leaves tombstones
-- (docs/retention.md).

-- Runs the sweep deleted, until expires_at: result() of such a run fails at once instead of
-- waiting for a run that will never be created. Dropped by delete_expired_runs once expired.
CREATE TABLE {{schema}}.run_tombstones (
  run_id     text PRIMARY KEY,
  deleted_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX run_tombstones_by_expiry ON {{schema}}.run_tombstones (expires_at);

-- One sweep batch in one statement: up to p_limit of the oldest finished runs older than
-- p_older_than_ms, each deleted as delete_run does, each leaving a tombstone. It never waits for a
-- lock: the candidates' records are taken FOR UPDATE SKIP LOCKED (a sweep running at the same time
-- holds them: they are its to delete), and a lease row another transaction holds (a reopen) is
-- skipped too. Waiting on nothing while holding record locks, it can be in no deadlock with
-- finish_run or a reopen, which take the lease first. Returns the deleted run ids.
CREATE FUNCTION {{schema}}.delete_expired_runs(p_older_than_ms bigint, p_limit integer,
                                               p_tombstone_ms bigint)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_run_id text;
  v_state text;
BEGIN
  DELETE FROM {{schema}}.run_tombstones t
  WHERE t.run_id IN (SELECT x.run_id FROM {{schema}}.run_tombstones x
                     WHERE x.expires_at <= v_now ORDER BY x.expires_at LIMIT p_limit);
  FOR v_run_id IN
    SELECT r.run_id FROM {{schema}}.runs r
    WHERE r.status IN ('completed', 'failed', 'cancelled') AND r.updated_at <= v_now - p_older_than_ms
    ORDER BY r.updated_at
    LIMIT p_limit
    FOR UPDATE OF r SKIP LOCKED
  LOOP
    SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = v_run_id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      -- No lease row, or one locked by another transaction: only the first may be deleted now.
      CONTINUE WHEN EXISTS (SELECT 1 FROM {{schema}}.leases l WHERE l.run_id = v_run_id);
    ELSIF v_state <> 'finished' THEN
      CONTINUE;
    END IF;
    DELETE FROM {{schema}}.checkpoints c WHERE c.run_id = v_run_id;
    DELETE FROM {{schema}}.signals s WHERE s.run_id = v_run_id;
    DELETE FROM {{schema}}.timers t WHERE t.run_id = v_run_id;
    DELETE FROM {{schema}}.cancel_requests x WHERE x.run_id = v_run_id;
    DELETE FROM {{schema}}.payloads p WHERE p.run_id = v_run_id;
    DELETE FROM {{schema}}.leases l WHERE l.run_id = v_run_id;
    DELETE FROM {{schema}}.runs r WHERE r.run_id = v_run_id;
    INSERT INTO {{schema}}.run_tombstones (run_id, deleted_at, expires_at)
    VALUES (v_run_id, v_now, v_now + p_tombstone_ms)
    ON CONFLICT (run_id) DO UPDATE SET deleted_at = EXCLUDED.deleted_at, expires_at = EXCLUDED.expires_at;
    RETURN NEXT v_run_id;
  END LOOP;
END $$;
