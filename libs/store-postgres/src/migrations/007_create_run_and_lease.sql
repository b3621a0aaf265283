-- Baton store, version 7: a worker claims the run of a start message in one call.
-- create_run_and_lease inserts the run as createRun does and, only when it inserted it, takes its
-- lease with acquire_lease: one transaction and one round trip instead of two. It returns the
-- lease columns of acquire_lease and the run's row (after the lease), or, when the run id or the
-- idempotency key was already known, that run's row and nothing else changed.
CREATE FUNCTION {{schema}}.create_run_and_lease(p_run_id text, p_workflow text, p_version integer,
                                                p_input json, p_idempotency_key text,
                                                p_traceparent text, p_owner text, p_ttl_ms bigint)
RETURNS TABLE (created boolean, acquired boolean, lease_epoch bigint, lease_owner text,
               lease_state text, lease_expires_at bigint, cancel_requested boolean,
               run_id text, workflow text, version integer, input text, idempotency_key text,
               status text, created_at bigint, updated_at bigint, result text, error text,
               attempts integer, traceparent text, forked_from text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_lease record;
BEGIN
  INSERT INTO {{schema}}.runs AS r
    (run_id, workflow, version, input, idempotency_key, status, created_at, updated_at, attempts,
     traceparent)
  VALUES (p_run_id, p_workflow, p_version, p_input, p_idempotency_key, 'pending',
          {{schema}}.now_ms(), {{schema}}.now_ms(), 0, p_traceparent)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    -- A conflicting insert waited for the other transaction, and this statement's snapshot sees
    -- the committed winner. The run id wins over the key, as in createRun.
    RETURN QUERY
      SELECT false, false, NULL::bigint, NULL::text, NULL::text, NULL::bigint, false,
             r.run_id, r.workflow, r.version, r.input::text, r.idempotency_key, r.status,
             r.created_at, r.updated_at, r.result::text, r.error::text, r.attempts, r.traceparent,
             r.forked_from::text
      FROM {{schema}}.runs r
      WHERE r.run_id = p_run_id OR (p_idempotency_key IS NOT NULL AND r.idempotency_key = p_idempotency_key)
      ORDER BY (r.run_id = p_run_id) DESC
      LIMIT 1;
    RETURN;
  END IF;
  SELECT * INTO v_lease FROM {{schema}}.acquire_lease(p_run_id, p_owner, p_ttl_ms);
  RETURN QUERY
    SELECT true, v_lease.acquired, v_lease.lease_epoch, v_lease.lease_owner, v_lease.lease_state,
           v_lease.lease_expires_at, v_lease.cancel_requested,
           r.run_id, r.workflow, r.version, r.input::text, r.idempotency_key, r.status,
           r.created_at, r.updated_at, r.result::text, r.error::text, r.attempts, r.traceparent,
           r.forked_from::text
    FROM {{schema}}.runs r
    WHERE r.run_id = p_run_id;
END $$;
