-- Baton store, version 1: the operations that must be atomic and take one round trip. Each runs
-- as one statement from the client, so it is one transaction. Under READ COMMITTED, each
-- statement inside a plpgsql function sees the rows committed before it started; the row lock
-- taken first (on the lease) is what orders concurrent callers.

-- The store's clock: ms since the Unix epoch, the transaction's now() on the server.
CREATE FUNCTION {{schema}}.now_ms() RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT floor(extract(epoch FROM now()) * 1000)::bigint $$;

-- Registered workers whose presence lock is granted to some session of this database.
CREATE VIEW {{schema}}.live_workers AS
SELECT w.worker_id
FROM {{schema}}.workers w
WHERE EXISTS (
  SELECT 1
  FROM pg_catalog.pg_locks k
  WHERE k.locktype = 'advisory'
    AND k.granted
    AND k.objsubid = 2 -- the two-int4-key form of pg_advisory_lock
    AND k.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database())
    AND k.classid = w.k1::oid
    AND k.objid = w.k2::oid
);

-- Takes the lease (epoch + 1) when it is absent, suspended, held by nobody, or expired; clears the
-- run's timer and marks an indexed run running with one more attempt. Refused: returns the holder.
CREATE FUNCTION {{schema}}.acquire_lease(p_run_id text, p_owner text, p_ttl_ms bigint)
RETURNS TABLE (acquired boolean, lease_epoch bigint, lease_owner text, lease_state text,
               lease_expires_at bigint, cancel_requested boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_epoch bigint;
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  -- A refusal re-reads the row in a second statement; if it changed hands in between (released,
  -- suspended), the lease may be free now, so try again a few times before reporting the holder.
  FOR attempt IN 1..3 LOOP
    INSERT INTO {{schema}}.leases AS l (run_id, epoch, owner, state, expires_at, waiting_for)
    VALUES (p_run_id, 1, p_owner, 'held', v_now + p_ttl_ms, '{}')
    ON CONFLICT (run_id) DO UPDATE
      SET epoch = l.epoch + 1, owner = EXCLUDED.owner, state = 'held',
          expires_at = EXCLUDED.expires_at, waiting_for = '{}'
      WHERE l.state = 'suspended'
         OR (l.state = 'held' AND (l.owner IS NULL OR l.expires_at <= v_now))
    RETURNING l.epoch INTO v_epoch;
    IF FOUND THEN
      DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
      UPDATE {{schema}}.runs r
        SET status = 'running', attempts = r.attempts + 1, updated_at = v_now
        WHERE r.run_id = p_run_id;
      RETURN QUERY SELECT true, v_epoch, p_owner, 'held'::text, v_now + p_ttl_ms,
        EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id);
      RETURN;
    END IF;
    SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id;
    EXIT WHEN v_lease.state = 'finished'
      OR (v_lease.state = 'held' AND v_lease.owner IS NOT NULL AND v_lease.expires_at > v_now);
  END LOOP;
  RETURN QUERY SELECT false, v_lease.epoch, v_lease.owner, v_lease.state, v_lease.expires_at, false;
END $$;

-- Suspends a held lease under its epoch unless a signal it waits for is pending or a cancel is
-- requested. Returns 'suspended', 'signal-pending', 'cancel-requested' or 'fenced'.
CREATE FUNCTION {{schema}}.suspend_run(p_run_id text, p_epoch bigint, p_wake_at bigint,
                                       p_signals text[], p_consumed text[])
RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  -- The lease row lock orders this against deliver_signal and request_cancel, which take it too:
  -- a signal committed before this lock is seen below; one after it finds the run suspended.
  PERFORM 1 FROM {{schema}}.leases l
    WHERE l.run_id = p_run_id AND l.epoch = p_epoch AND l.state = 'held'
    FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'fenced';
  END IF;
  IF EXISTS (
    SELECT 1 FROM {{schema}}.signals s
    WHERE s.run_id = p_run_id AND s.name = ANY (p_signals) AND NOT (s.signal_id = ANY (p_consumed))
  ) THEN
    RETURN 'signal-pending';
  END IF;
  IF EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id) THEN
    RETURN 'cancel-requested';
  END IF;
  UPDATE {{schema}}.leases l
    SET state = 'suspended', owner = NULL, expires_at = NULL, waiting_for = p_signals
    WHERE l.run_id = p_run_id;
  IF p_wake_at IS NULL THEN
    DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
  ELSE
    INSERT INTO {{schema}}.timers AS t (run_id, due_at) VALUES (p_run_id, p_wake_at)
    ON CONFLICT (run_id) DO UPDATE SET due_at = EXCLUDED.due_at;
  END IF;
  UPDATE {{schema}}.runs r SET status = 'suspended', updated_at = {{schema}}.now_ms()
    WHERE r.run_id = p_run_id;
  RETURN 'suspended';
END $$;

-- Makes a suspended lease acquirable at once (held by nobody, expired now) and drops its timer.
CREATE FUNCTION {{schema}}.wake_suspended(p_run_id text) RETURNS void
LANGUAGE sql AS $$
  UPDATE {{schema}}.leases l
    SET state = 'held', owner = NULL, expires_at = {{schema}}.now_ms(), waiting_for = '{}'
    WHERE l.run_id = p_run_id;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
$$;

-- Sets the cancel flag of a known run (indexed or claimed); wakes it if it is suspended.
CREATE FUNCTION {{schema}}.request_cancel(p_run_id text)
RETURNS TABLE (run_found boolean, wake_run boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
BEGIN
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_state IS NULL AND NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
    RETURN QUERY SELECT false, false;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.cancel_requests (run_id, requested_at)
    VALUES (p_run_id, {{schema}}.now_ms())
    ON CONFLICT (run_id) DO NOTHING;
  IF v_state = 'suspended' THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false;
END $$;

-- Adds a signal to a known run's inbox (once per signal id); wakes the run if it is suspended
-- waiting for this name.
CREATE FUNCTION {{schema}}.deliver_signal(p_run_id text, p_signal_id text, p_name text, p_payload json)
RETURNS TABLE (run_found boolean, wake_run boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_lease.run_id IS NULL AND NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
    RETURN QUERY SELECT false, false;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.signals (run_id, signal_id, name, payload, received_at)
    VALUES (p_run_id, p_signal_id, p_name, p_payload, {{schema}}.now_ms())
    ON CONFLICT (run_id, signal_id) DO NOTHING;
  IF NOT FOUND THEN
    RETURN QUERY SELECT true, false;
    RETURN;
  END IF;
  IF v_lease.state = 'suspended' AND p_name = ANY (v_lease.waiting_for) THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false;
END $$;

-- Records the outcome under the fence, keeps the final checkpoint if one is given (p_body not
-- null), marks the lease finished and drops the timer. False (nothing changed) under a stale
-- epoch or once finished.
CREATE FUNCTION {{schema}}.finish_run(p_run_id text, p_epoch bigint, p_status text, p_result json,
                                      p_error json, p_seq bigint, p_cp_epoch bigint,
                                      p_journal_position bigint, p_cp_status text,
                                      p_schema_version integer, p_created_at bigint,
                                      p_size integer, p_body json)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {{schema}}.leases l
    SET state = 'finished', owner = NULL, expires_at = NULL, waiting_for = '{}'
    WHERE l.run_id = p_run_id AND l.epoch = p_epoch AND l.state <> 'finished';
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE {{schema}}.runs r
    SET status = p_status,
        result = CASE WHEN p_status = 'completed' THEN p_result ELSE r.result END,
        error = CASE WHEN p_status = 'completed' THEN r.error ELSE p_error END,
        updated_at = {{schema}}.now_ms()
    WHERE r.run_id = p_run_id;
  IF p_body IS NOT NULL THEN
    INSERT INTO {{schema}}.checkpoints
      (run_id, seq, epoch, journal_position, status, schema_version, created_at, size, body)
    VALUES (p_run_id, p_seq, p_cp_epoch, p_journal_position, p_cp_status, p_schema_version,
            p_created_at, p_size, p_body);
  END IF;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
  RETURN true;
END $$;

-- Reaps the held leases of registered workers whose presence lock is gone, like the expiry
-- reaper does (owner: nobody, expiry: now + reclaim), at most p_limit, skipping rows another
-- reaper has locked. Forgets a dead worker once it owns no held lease.
CREATE FUNCTION {{schema}}.reap_dead_workers(p_limit integer, p_reclaim_after_ms bigint)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_dead text[];
BEGIN
  SELECT coalesce(array_agg(w.worker_id), '{}') INTO v_dead
    FROM {{schema}}.workers w
    WHERE NOT EXISTS (SELECT 1 FROM {{schema}}.live_workers lw WHERE lw.worker_id = w.worker_id);
  IF cardinality(v_dead) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY
    WITH victims AS (
      SELECT l.run_id, l.expires_at
      FROM {{schema}}.leases l
      WHERE l.state = 'held' AND l.owner = ANY (v_dead)
      ORDER BY l.expires_at, l.run_id
      LIMIT greatest(p_limit, 0)
      FOR UPDATE SKIP LOCKED
    ), reaped AS (
      UPDATE {{schema}}.leases l
        SET owner = NULL, expires_at = v_now + p_reclaim_after_ms
        FROM victims v
        WHERE l.run_id = v.run_id
        RETURNING l.run_id, v.expires_at AS old_expiry
    )
    SELECT r.run_id FROM reaped r ORDER BY r.old_expiry, r.run_id;
  -- The lock is checked again: a worker that reconnected since the scan above keeps its row.
  DELETE FROM {{schema}}.workers w
    WHERE w.worker_id = ANY (v_dead)
      AND NOT EXISTS (SELECT 1 FROM {{schema}}.live_workers lw WHERE lw.worker_id = w.worker_id)
      AND NOT EXISTS (
        SELECT 1 FROM {{schema}}.leases l WHERE l.state = 'held' AND l.owner = w.worker_id
      );
END $$;
