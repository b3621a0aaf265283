-- Baton store, version 23: updates (UpdateStore in @baton/core's contracts/updates.ts). One row per
-- run and update id: pending while `settled_at` is null (in arrival order by `id`), then the kept
-- outcome. The rows go with their run: the foreign key deletes them when delete_run or
-- delete_expired_runs deletes the run's record, so neither function changes.
CREATE TABLE {{schema}}.updates (
  id           bigserial NOT NULL,
  run_id       text NOT NULL REFERENCES {{schema}}.runs (run_id) ON DELETE CASCADE,
  update_id    text NOT NULL,
  name         text NOT NULL,
  args         json,
  requested_at bigint,
  -- The UpdateOutcome ({"status", "result" | "error"}) once settled.
  outcome      json,
  settled_at   bigint,
  PRIMARY KEY (run_id, update_id)
);
-- What an owner reads (its run's pending requests, oldest first) and polls (which runs have any).
CREATE INDEX updates_pending ON {{schema}}.updates (run_id, id) WHERE settled_at IS NULL;

-- A request: the kept outcome of an id settled before; nothing for a finished run; else the
-- request, kept once per id, and a suspended run woken. The lease row is locked first, as
-- suspend_run locks it, so a request either lands before a suspension (whose owner then finds it
-- among its pending requests) or after it (and wakes the run): none is left unseen.
CREATE FUNCTION {{schema}}.request_update(p_run_id text, p_update_id text, p_name text, p_args json)
RETURNS TABLE (run_found boolean, wake_run boolean, run_finished boolean,
               kept_name text, kept_outcome json, kept_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
  v_kept {{schema}}.updates%ROWTYPE;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = p_run_id) THEN
    RETURN QUERY SELECT false, false, false, NULL::text, NULL::json, NULL::bigint;
    RETURN;
  END IF;
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT * INTO v_kept FROM {{schema}}.updates u
    WHERE u.run_id = p_run_id AND u.update_id = p_update_id AND u.settled_at IS NOT NULL;
  IF FOUND THEN
    RETURN QUERY SELECT true, false, false, v_kept.name, v_kept.outcome, v_kept.settled_at;
    RETURN;
  END IF;
  IF v_state = 'finished' THEN
    RETURN QUERY SELECT true, false, true, NULL::text, NULL::json, NULL::bigint;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.updates (run_id, update_id, name, args, requested_at)
    VALUES (p_run_id, p_update_id, p_name, p_args, {{schema}}.now_ms())
    ON CONFLICT (run_id, update_id) DO NOTHING;
  IF v_state = 'suspended' THEN
    PERFORM {{schema}}.wake_suspended(p_run_id);
    RETURN QUERY SELECT true, true, false, NULL::text, NULL::json, NULL::bigint;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, false, false, NULL::text, NULL::json, NULL::bigint;
END $$;

-- The owner keeps an outcome, fenced by its epoch (the lease row shared-locked, so no claim moves
-- it meanwhile); the first settle of an id wins. Returns 'fenced', or 'ok' with the kept update.
CREATE FUNCTION {{schema}}.settle_update(p_run_id text, p_epoch bigint, p_update_id text, p_name text,
                                         p_outcome json)
RETURNS TABLE (answer text, kept_name text, kept_outcome json, kept_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_lease {{schema}}.leases%ROWTYPE;
BEGIN
  SELECT * INTO v_lease FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR SHARE;
  IF NOT FOUND OR v_lease.state <> 'held' OR v_lease.epoch <> p_epoch THEN
    RETURN QUERY SELECT 'fenced'::text, NULL::text, NULL::json, NULL::bigint;
    RETURN;
  END IF;
  INSERT INTO {{schema}}.updates AS u (run_id, update_id, name, outcome, settled_at)
    VALUES (p_run_id, p_update_id, p_name, p_outcome, {{schema}}.now_ms())
    ON CONFLICT (run_id, update_id) DO UPDATE SET outcome = EXCLUDED.outcome, settled_at = EXCLUDED.settled_at
    WHERE u.settled_at IS NULL;
  RETURN QUERY SELECT 'ok'::text, u.name, u.outcome, u.settled_at FROM {{schema}}.updates u
    WHERE u.run_id = p_run_id AND u.update_id = p_update_id;
END $$;
