-- Baton store, version 10: a finished run keeps no signal; a cancel request keeps its reason.
-- deliver_signal returns a third column, dropped: true when the run's lease is finished
-- (completed, failed or cancelled). Such a signal is not inserted: nothing reads a finished run's
-- inbox, and signals sent after the end would otherwise pile up until retention.
DROP FUNCTION {{schema}}.deliver_signal(text, text, text, json);

CREATE FUNCTION {{schema}}.deliver_signal(p_run_id text, p_signal_id text, p_name text, p_payload json)
RETURNS TABLE (run_found boolean, wake_run boolean, dropped boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF v_lease.run_id IS NULL AND NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
    RETURN QUERY SELECT false, false, false;
    RETURN;
  END IF;
  IF v_lease.state = 'finished' THEN
    RETURN QUERY SELECT true, false, true;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.signals (run_id, signal_id, name, payload, received_at)
    VALUES (p_run_id, p_signal_id, p_name, p_payload, {{schema}}.now_ms())
    ON CONFLICT (run_id, signal_id) DO NOTHING;
  IF NOT FOUND THEN
    RETURN QUERY SELECT true, false, false;
    RETURN;
  END IF;
  IF v_lease.state = 'suspended' AND p_name = ANY (v_lease.waiting_for) THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true, false;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false, false;
END $$;

-- The reason a cancel was requested with (client.cancel(id, reason)); the first request's wins.
-- getLease reads it back, and the run ends cancelled with it. The one-argument request_cancel
-- stays for workers of the previous version during a rolling deploy (it records no reason).
ALTER TABLE {{schema}}.cancel_requests ADD COLUMN reason text;

CREATE FUNCTION {{schema}}.request_cancel(p_run_id text, p_reason text)
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
  IF v_state = 'suspended' THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false;
END $$;
