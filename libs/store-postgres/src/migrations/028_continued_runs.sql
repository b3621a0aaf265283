-- Baton store, version 28: a run that continues as new names its successor (runs.continueAs in
-- @baton/core's contracts/run-index.ts), and from then on keeps no signal, update request or
-- promise completion: the answers name the successor instead, so the caller goes on to it.
--
-- deliver_signal, request_update and complete_promise return one more column, continued_as (NULL
-- for a run that has not continued). A worker or client of the previous version reads the columns
-- it knows by name and ignores the new one.
ALTER TABLE {{schema}}.runs ADD COLUMN continued_as text;

-- The owner's fenced mark, the lease row locked first as every function below locks it, so a
-- signal, request or completion lands either before the mark (and is carried over by the owner)
-- or after it (and is answered with the successor). The first successor named is kept.
-- Returns false under a stale epoch or once the run is finished.
CREATE FUNCTION {{schema}}.continue_run_as(p_run_id text, p_epoch bigint, p_successor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  IF NOT FOUND OR v_lease.state = 'finished' OR v_lease.epoch <> p_epoch THEN
    RETURN false;
  END IF;
  UPDATE {{schema}}.runs r SET continued_as = p_successor, updated_at = {{schema}}.now_ms()
    WHERE r.run_id = p_run_id AND r.continued_as IS NULL;
  RETURN true;
END $$;

DROP FUNCTION {{schema}}.deliver_signal(text, text, text, json);

-- A signal: nothing for an unknown run; for a run that continued as new, a repeat of a signal its
-- inbox holds changes nothing and any other is answered with the successor (dropped once the run
-- is finished); nothing for a finished run (dropped); else kept once per id, waking the run when it
-- is suspended waiting for that name.
CREATE FUNCTION {{schema}}.deliver_signal(p_run_id text, p_signal_id text, p_name text, p_payload json)
RETURNS TABLE (run_found boolean, wake_run boolean, dropped boolean, continued_as text)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
  v_found boolean;
  v_successor text;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT true, r.continued_as INTO v_found, v_successor FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  IF v_lease.run_id IS NULL AND v_found IS NULL THEN
    RETURN QUERY SELECT false, false, false, NULL::text;
    RETURN;
  END IF;
  IF v_successor IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM {{schema}}.signals s WHERE s.run_id = p_run_id AND s.signal_id = p_signal_id) THEN
      RETURN QUERY SELECT true, false, false, NULL::text;
      RETURN;
    END IF;
    RETURN QUERY SELECT true, false, v_lease.state IS NOT DISTINCT FROM 'finished', v_successor;
    RETURN;
  END IF;
  IF v_lease.state = 'finished' THEN
    RETURN QUERY SELECT true, false, true, NULL::text;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.signals (run_id, signal_id, name, payload, received_at)
    VALUES (p_run_id, p_signal_id, p_name, p_payload, {{schema}}.now_ms())
    ON CONFLICT (run_id, signal_id) DO NOTHING;
  IF NOT FOUND THEN
    RETURN QUERY SELECT true, false, false, NULL::text;
    RETURN;
  END IF;
  IF v_lease.state = 'suspended' AND p_name = ANY (v_lease.waiting_for) THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true, false, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false, false, NULL::text;
END $$;

DROP FUNCTION {{schema}}.request_update(text, text, text, json);

-- An update request, as in version 23, but a run that continued as new keeps nothing for an id
-- it never settled: the answer names the successor (run_finished once the run is finished).
CREATE FUNCTION {{schema}}.request_update(p_run_id text, p_update_id text, p_name text, p_args json)
RETURNS TABLE (run_found boolean, wake_run boolean, run_finished boolean,
               kept_name text, kept_outcome json, kept_at bigint, continued_as text)
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
  v_successor text;
  v_kept {{schema}}.updates%ROWTYPE;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
    RETURN QUERY SELECT false, false, false, NULL::text, NULL::json, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT * INTO v_kept FROM {{schema}}.updates u
    WHERE u.run_id = p_run_id AND u.update_id = p_update_id AND u.settled_at IS NOT NULL;
  IF FOUND THEN
    RETURN QUERY SELECT true, false, false, v_kept.name, v_kept.outcome, v_kept.settled_at, NULL::text;
    RETURN;
  END IF;
  SELECT r.continued_as INTO v_successor FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  IF v_successor IS NOT NULL THEN
    RETURN QUERY SELECT true, false, v_state IS NOT DISTINCT FROM 'finished', NULL::text, NULL::json,
      NULL::bigint, v_successor;
    RETURN;
  END IF;
  IF v_state = 'finished' THEN
    RETURN QUERY SELECT true, false, true, NULL::text, NULL::json, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.updates (run_id, update_id, name, args, requested_at)
    VALUES (p_run_id, p_update_id, p_name, p_args, {{schema}}.now_ms())
    ON CONFLICT (run_id, update_id) DO NOTHING;
  IF v_state = 'suspended' THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true, false, NULL::text, NULL::json, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false, false, NULL::text, NULL::json, NULL::bigint, NULL::text;
END $$;

DROP FUNCTION {{schema}}.complete_promise(text, text, json);

-- A completion, as in version 24, but a promise of a run that continued as new is refused like one
-- of a finished run, with the successor named: the promise was the run's, and nothing waits for it.
CREATE FUNCTION {{schema}}.complete_promise(p_token text, p_state text, p_payload json)
RETURNS TABLE (promise_found boolean, completed boolean, run_finished boolean, promise_run_id text,
               wake_run boolean, continued_as text)
LANGUAGE plpgsql AS $$
DECLARE
  v_run_id text;
  v_successor text;
  v_promise {{schema}}.promises%ROWTYPE;
  v_lease {{schema}}.leases%ROWTYPE;
  v_now bigint := {{schema}}.now_ms();
BEGIN
  SELECT p.run_id INTO v_run_id FROM {{schema}}.promises p WHERE p.token = p_token;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, false, NULL::text, false, NULL::text;
    RETURN;
  END IF;
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = v_run_id FOR UPDATE;
  SELECT * INTO v_promise FROM {{schema}}.promises p WHERE p.token = p_token FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, false, NULL::text, false, NULL::text;
    RETURN;
  END IF;
  IF v_promise.state <> 'pending' THEN
    RETURN QUERY SELECT true, false, false, v_run_id, false, NULL::text;
    RETURN;
  END IF;
  SELECT r.continued_as INTO v_successor FROM {{schema}}.runs r WHERE r.run_id = v_run_id;
  IF v_successor IS NOT NULL THEN
    RETURN QUERY SELECT true, false, true, v_run_id, false, v_successor;
    RETURN;
  END IF;
  IF v_lease.state = 'finished' THEN
    RETURN QUERY SELECT true, false, true, v_run_id, false, NULL::text;
    RETURN;
  END IF;
  UPDATE {{schema}}.promises p SET state = p_state, completed_at = v_now, payload = p_payload
    WHERE p.token = p_token;
  INSERT INTO {{schema}}.signals (run_id, signal_id, name, payload, received_at)
    VALUES (v_run_id, 'baton.promise:' || v_promise.seq, 'baton.promise', p_payload, v_now)
    ON CONFLICT (run_id, signal_id) DO NOTHING;
  IF v_lease.state = 'suspended' AND 'baton.promise' = ANY (v_lease.waiting_for) THEN
    PERFORM {{schema}}.wake_suspended(v_run_id);
    RETURN QUERY SELECT true, true, false, v_run_id, true, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, true, false, v_run_id, false, NULL::text;
END $$;
