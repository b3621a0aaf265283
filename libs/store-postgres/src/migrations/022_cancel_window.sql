-- Baton store, version 22: a cancel is never lost to a run's end, and reaches the owner at once.
--
-- A run's owner closes the run's cancels (close_cancels) just before it journals a completed or
-- failed end: a cancel requested before that answers the close and the run ends cancelled; one
-- requested after it is too late and changes nothing. The close is the lease's epoch at that
-- moment (cancels_closed_at), so it lasts only for that owner: a new owner (the next epoch)
-- accepts cancels again until it closes them itself, and nothing has to clear it.
--
-- An accepted cancel of a run a worker holds is told to that worker at once: request_cancel
-- notifies p_channel (the schema's cancels channel, named by the store: every presence session
-- of the schema LISTENs on it) with the payload json [owner, run_id]; the owner's session picks
-- it out. NOTIFY is sent at commit, so the owner never hears of a cancel that did not happen. The
-- two-argument request_cancel of version 10 stays for workers not yet upgraded.
ALTER TABLE {{schema}}.leases ADD COLUMN cancels_closed_at bigint;

CREATE FUNCTION {{schema}}.request_cancel(p_run_id text, p_reason text, p_channel text)
RETURNS TABLE (run_found boolean, wake_run boolean, too_late boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
  v_status text;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT r.status INTO v_status FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  IF v_lease.run_id IS NULL AND v_status IS NULL THEN
    RETURN QUERY SELECT false, false, false;
    RETURN;
  END IF;
  IF v_lease.state = 'finished' OR v_status IN ('completed', 'failed', 'cancelled')
     OR (v_lease.state = 'held' AND v_lease.cancels_closed_at = v_lease.epoch) THEN
    RETURN QUERY SELECT true, false, true;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.cancel_requests (run_id, requested_at, reason)
    VALUES (p_run_id, {{schema}}.now_ms(), p_reason)
    ON CONFLICT (run_id) DO NOTHING;
  UPDATE {{schema}}.leases l SET pause_requested = false, pause_reason = NULL
    WHERE l.run_id = p_run_id AND (l.pause_requested OR l.pause_reason IS NOT NULL);
  IF v_lease.state = 'held' AND v_lease.owner IS NOT NULL AND p_channel IS NOT NULL THEN
    PERFORM pg_notify(p_channel, json_build_array(v_lease.owner, p_run_id)::text);
  END IF;
  IF v_lease.state = 'paused' THEN
    UPDATE {{schema}}.runs r SET status = 'pending', updated_at = {{schema}}.now_ms()
      WHERE r.run_id = p_run_id;
  END IF;
  IF v_lease.state IN ('suspended', 'paused') THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true, false;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false, false;
END $$;

-- The owner's fenced close before it journals a completed or failed end. Returns 'fenced' (not
-- the held lease's epoch), 'cancel-requested' with the kept reason (nothing changes), or 'closed'.
CREATE FUNCTION {{schema}}.close_cancels(p_run_id text, p_epoch bigint)
RETURNS TABLE (outcome text, cancel_reason text)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
  v_reason text;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_lease.run_id IS NULL OR v_lease.state <> 'held' OR v_lease.epoch <> p_epoch THEN
    RETURN QUERY SELECT 'fenced'::text, NULL::text;
    RETURN;
  END IF;
  SELECT c.reason INTO v_reason FROM {{schema}}.cancel_requests c WHERE c.run_id = p_run_id;
  IF FOUND THEN
    RETURN QUERY SELECT 'cancel-requested'::text, v_reason;
    RETURN;
  END IF;
  UPDATE {{schema}}.leases l SET cancels_closed_at = p_epoch WHERE l.run_id = p_run_id;
  RETURN QUERY SELECT 'closed'::text, NULL::text;
END $$;
