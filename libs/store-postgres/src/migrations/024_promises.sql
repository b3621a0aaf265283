-- Baton store, version 23: durable promises (PromiseStore in @baton/core's contracts/promises.ts).
-- One row per promise, by its token. A completion is recorded and delivered to the run's inbox in
-- one transaction (complete_promise), which takes the run's lease row first, as deliver_signal and
-- suspend_run do: a completion lands either before a suspension (which then sees it and refuses)
-- or after it (and wakes the run). A run's promises go with the run: the triggers below delete
-- them when its lease or record is deleted, whichever function deletes it (retention's).
CREATE TABLE {{schema}}.promises (
  token        text PRIMARY KEY,
  run_id       text NOT NULL,
  seq          integer NOT NULL,
  -- 'pending' until completed once: 'resolved', 'rejected' or 'timed-out'.
  state        text NOT NULL,
  -- The JSON Schema a value must match at completion; NULL for none.
  schema       json,
  timeout_at   bigint,
  created_at   bigint NOT NULL,
  completed_at bigint,
  -- The completion's payload as given (sealed when the fleet encrypts); NULL until completed.
  payload      json
);
CREATE INDEX promises_by_run ON {{schema}}.promises (run_id, seq);

-- Completes a pending promise and adds the completion to its run's inbox (name 'baton.promise',
-- id 'baton.promise:<seq>'), waking the run when it is suspended waiting for that name. Locks the
-- lease row before the promise row, the order retention's deletes take them in.
CREATE FUNCTION {{schema}}.complete_promise(p_token text, p_state text, p_payload json)
RETURNS TABLE (promise_found boolean, completed boolean, run_finished boolean, promise_run_id text,
               wake_run boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_run_id text;
  v_promise {{schema}}.promises%ROWTYPE;
  v_lease {{schema}}.leases%ROWTYPE;
  v_now bigint := {{schema}}.now_ms();
BEGIN
  SELECT p.run_id INTO v_run_id FROM {{schema}}.promises p WHERE p.token = p_token;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, false, NULL::text, false;
    RETURN;
  END IF;
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = v_run_id FOR UPDATE;
  SELECT * INTO v_promise FROM {{schema}}.promises p WHERE p.token = p_token FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, false, NULL::text, false;
    RETURN;
  END IF;
  IF v_promise.state <> 'pending' THEN
    RETURN QUERY SELECT true, false, false, v_run_id, false;
    RETURN;
  END IF;
  IF v_lease.state = 'finished' THEN
    RETURN QUERY SELECT true, false, true, v_run_id, false;
    RETURN;
  END IF;
  UPDATE {{schema}}.promises p SET state = p_state, completed_at = v_now, payload = p_payload
    WHERE p.token = p_token;
  INSERT INTO {{schema}}.signals (run_id, signal_id, name, payload, received_at)
    VALUES (v_run_id, 'baton.promise:' || v_promise.seq, 'baton.promise', p_payload, v_now)
    ON CONFLICT (run_id, signal_id) DO NOTHING;
  IF v_lease.state = 'suspended' AND 'baton.promise' = ANY (v_lease.waiting_for) THEN
    PERFORM {{schema}}.wake_suspended(v_run_id);
    RETURN QUERY SELECT true, true, false, v_run_id, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, true, false, v_run_id, false;
END $$;

CREATE FUNCTION {{schema}}.drop_run_promises() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {{schema}}.promises p WHERE p.run_id = OLD.run_id;
  RETURN OLD;
END $$;

CREATE TRIGGER leases_drop_promises AFTER DELETE ON {{schema}}.leases
  FOR EACH ROW EXECUTE FUNCTION {{schema}}.drop_run_promises();
CREATE TRIGGER runs_drop_promises AFTER DELETE ON {{schema}}.runs
  FOR EACH ROW EXECUTE FUNCTION {{schema}}.drop_run_promises();
