-- Baton store, version 12: pausing and resuming a run (LeaseStore.requestPause, pauseHeldRun,
-- resumeRun; docs/operations.md).
--
-- A paused lease has state 'paused': no owner, no expiry, no timer row. Nothing acquires it
-- (acquire_lease refuses it), no reaper scans it (they look at 'held' leases only) and no timer
-- wakes it, until resume_run makes it held by nobody, expiring now. A pause asked of a run a live
-- owner holds is the lease's pause_requested flag, which renewals report; the owner stops at its
-- next step and calls pause_held_run. Should it die first, acquire_lease pauses the run instead of
-- handing it to the next worker. A pending run that was never claimed gets a paused lease of
-- epoch 0, so the first claim after the resume takes epoch 1 as any first claim does.
-- The run counts of version 11 count 'paused' as they count any status.
ALTER TABLE {{schema}}.leases DROP CONSTRAINT leases_state_check;
ALTER TABLE {{schema}}.leases ADD CONSTRAINT leases_state_check
  CHECK (state IN ('held', 'suspended', 'paused', 'finished'));
ALTER TABLE {{schema}}.leases DROP CONSTRAINT leases_epoch_check;
ALTER TABLE {{schema}}.leases ADD CONSTRAINT leases_epoch_check CHECK (epoch >= 0);
ALTER TABLE {{schema}}.leases ADD COLUMN pause_requested boolean NOT NULL DEFAULT false;
-- The first pause request's reason, kept while the run is paused or its pause is requested.
ALTER TABLE {{schema}}.leases ADD COLUMN pause_reason text;
ALTER TABLE {{schema}}.runs DROP CONSTRAINT runs_status_check;
ALTER TABLE {{schema}}.runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('pending', 'running', 'suspended', 'paused', 'completed', 'failed', 'cancelled'));

-- Pauses the run's lease (the caller holds its row lock): no owner, no expiry, no timer, no
-- pause request; the run record 'paused'. A lease that was ever held moves to the next epoch, so
-- its last holder's late writes (a checkpoint, a finish) are fenced.
CREATE FUNCTION {{schema}}.pause_lease(p_run_id text) RETURNS void
LANGUAGE sql AS $$
  UPDATE {{schema}}.leases l
    SET state = 'paused', epoch = CASE WHEN l.epoch > 0 THEN l.epoch + 1 ELSE 0 END, owner = NULL, expires_at = NULL, waiting_for = '{}', pause_requested = false
    WHERE l.run_id = p_run_id;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
  UPDATE {{schema}}.runs r SET status = 'paused', updated_at = {{schema}}.now_ms()
    WHERE r.run_id = p_run_id;
$$;

-- As in version 1, and: a paused lease is refused (lease_state 'paused'); a free lease with a
-- pause request (its owner died or handed it off before it stopped) is paused and refused.
CREATE OR REPLACE FUNCTION {{schema}}.acquire_lease(p_run_id text, p_owner text, p_ttl_ms bigint)
RETURNS TABLE (acquired boolean, lease_epoch bigint, lease_owner text, lease_state text,
               lease_expires_at bigint, cancel_requested boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_epoch bigint;
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  FOR attempt IN 1..3 LOOP
    INSERT INTO {{schema}}.leases AS l (run_id, epoch, owner, state, expires_at, waiting_for)
    VALUES (p_run_id, 1, p_owner, 'held', v_now + p_ttl_ms, '{}')
    ON CONFLICT (run_id) DO UPDATE
      SET epoch = l.epoch + 1, owner = EXCLUDED.owner, state = 'held',
          expires_at = EXCLUDED.expires_at, waiting_for = '{}'
      WHERE NOT l.pause_requested
        AND (l.state = 'suspended'
             OR (l.state = 'held' AND (l.owner IS NULL OR l.expires_at <= v_now)))
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
    SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
    IF v_lease.pause_requested AND v_lease.state IN ('held', 'suspended')
       AND (v_lease.state = 'suspended' OR v_lease.owner IS NULL OR v_lease.expires_at <= v_now) THEN
      PERFORM {{schema}}.pause_lease(p_run_id);
      RETURN QUERY SELECT false, v_lease.epoch, NULL::text, 'paused'::text, NULL::bigint, false;
      RETURN;
    END IF;
    EXIT WHEN v_lease.state IN ('finished', 'paused')
      OR (v_lease.state = 'held' AND v_lease.owner IS NOT NULL AND v_lease.expires_at > v_now);
  END LOOP;
  RETURN QUERY SELECT false, v_lease.epoch, v_lease.owner, v_lease.state, v_lease.expires_at, false;
END $$;

-- As in version 1, and: a pause requested meanwhile pauses the run instead ('paused').
CREATE OR REPLACE FUNCTION {{schema}}.suspend_run(p_run_id text, p_epoch bigint, p_wake_at bigint,
                                                  p_signals text[], p_consumed text[])
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_pause boolean;
BEGIN
  SELECT l.pause_requested INTO v_pause FROM {{schema}}.leases l
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
  IF v_pause THEN
    PERFORM {{schema}}.pause_lease(p_run_id);
    RETURN 'paused';
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

-- As in version 10, and: a cancel withdraws any pause request (a cancel wins over a pause) and
-- wakes a paused run too (its record 'pending' until a worker claims it and ends it cancelled).
CREATE OR REPLACE FUNCTION {{schema}}.request_cancel(p_run_id text, p_reason text)
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
  INSERT INTO {{schema}}.cancel_requests (run_id, requested_at, reason)
    VALUES (p_run_id, {{schema}}.now_ms(), p_reason)
    ON CONFLICT (run_id) DO NOTHING;
  UPDATE {{schema}}.leases l SET pause_requested = false, pause_reason = NULL
    WHERE l.run_id = p_run_id AND (l.pause_requested OR l.pause_reason IS NOT NULL);
  IF v_state = 'paused' THEN
    UPDATE {{schema}}.runs r SET status = 'pending', updated_at = {{schema}}.now_ms()
      WHERE r.run_id = p_run_id;
  END IF;
  IF v_state IN ('suspended', 'paused') THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false;
END $$;

-- Pauses a run no live owner holds, or asks its live owner to. Returns 'unknown', 'finished',
-- 'cancel-requested', 'paused' or 'pause-requested'.
CREATE FUNCTION {{schema}}.request_pause(p_run_id text, p_reason text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
  v_now bigint := {{schema}}.now_ms();
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_lease.run_id IS NULL THEN
    -- No lease row yet. A first claim racing this one inserts it too: the loser of the two inserts
    -- sees the winner's row (acquire_lease then finds it paused; this function asks again). The
    -- run row is not locked here: acquire_lease locks the lease row before the run row.
    IF NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
      RETURN 'unknown';
    END IF;
    IF EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id) THEN
      RETURN 'cancel-requested';
    END IF;
    INSERT INTO {{schema}}.leases AS l (run_id, epoch, owner, state, expires_at, waiting_for, pause_reason)
      VALUES (p_run_id, 0, NULL, 'paused', NULL, '{}', p_reason)
      ON CONFLICT (run_id) DO NOTHING;
    IF NOT FOUND THEN
      -- A worker claimed it between the read and the insert: ask again, now that the row exists.
      RETURN {{schema}}.request_pause(p_run_id, p_reason);
    END IF;
    PERFORM {{schema}}.pause_lease(p_run_id);
    RETURN 'paused';
  END IF;
  IF v_lease.state IN ('finished', 'paused') THEN
    RETURN v_lease.state;
  END IF;
  IF EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id) THEN
    RETURN 'cancel-requested';
  END IF;
  UPDATE {{schema}}.leases l SET pause_reason = coalesce(l.pause_reason, p_reason)
    WHERE l.run_id = p_run_id;
  IF v_lease.state = 'held' AND v_lease.owner IS NOT NULL AND v_lease.expires_at > v_now THEN
    UPDATE {{schema}}.leases l SET pause_requested = true WHERE l.run_id = p_run_id;
    RETURN 'pause-requested';
  END IF;
  PERFORM {{schema}}.pause_lease(p_run_id);
  RETURN 'paused';
END $$;

-- The owner's fenced pause of the lease it holds. Returns 'paused', 'cancel-requested' (a cancel
-- wins: nothing changed), 'not-requested' (the request was withdrawn: nothing changed) or 'fenced'.
CREATE FUNCTION {{schema}}.pause_held_run(p_run_id text, p_epoch bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_pause boolean;
BEGIN
  SELECT l.pause_requested INTO v_pause FROM {{schema}}.leases l
    WHERE l.run_id = p_run_id AND l.epoch = p_epoch AND l.state = 'held'
    FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'fenced';
  END IF;
  IF EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id) THEN
    RETURN 'cancel-requested';
  END IF;
  IF NOT v_pause THEN
    RETURN 'not-requested';
  END IF;
  PERFORM {{schema}}.pause_lease(p_run_id);
  RETURN 'paused';
END $$;

-- Resumes a paused run (held by nobody, expiring now; its record 'pending') or withdraws a pause
-- request. Returns 'unknown', 'resumed' (the caller enqueues a wake), 'withdrawn' or 'unchanged'.
CREATE FUNCTION {{schema}}.resume_run(p_run_id text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_lease.run_id IS NULL THEN
    IF EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
      RETURN 'unchanged';
    END IF;
    RETURN 'unknown';
  END IF;
  IF v_lease.state = 'paused' THEN
    UPDATE {{schema}}.leases l SET pause_reason = NULL WHERE l.run_id = p_run_id;
    PERFORM {{schema}}.wake_suspended(p_run_id);
    UPDATE {{schema}}.runs r SET status = 'pending', updated_at = {{schema}}.now_ms()
      WHERE r.run_id = p_run_id;
    RETURN 'resumed';
  END IF;
  IF v_lease.state = 'held' AND v_lease.pause_requested THEN
    UPDATE {{schema}}.leases l SET pause_requested = false, pause_reason = NULL
      WHERE l.run_id = p_run_id;
    RETURN 'withdrawn';
  END IF;
  RETURN 'unchanged';
END $$;
