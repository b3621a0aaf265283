-- Baton store, version 29: a worker's claims, cancel closes and finishes of many runs, each kind in
-- one call (batch.ts). Each function does for every element of its arrays what the one-run
-- function does (create_run_and_lease, close_cancels, finish_run, all kept: a worker of the
-- previous version goes on calling them), but set-wise: one statement per table, so the run
-- counters' triggers (migration 011) fire once per statement and take their rows once, in their
-- order, instead of once per run in the order of the runs. Every function answers one row per
-- element, with its 1-based place as `ord`. The caller passes each run id at most once.
-- Lease rows are locked in run id order first, so two calls sharing runs never deadlock on them.

-- Inserts the runs none of whose id or key is known, leases each one it inserted (as acquire_lease
-- does a free lease) and answers as create_run_and_lease, per element.
CREATE FUNCTION {{schema}}.create_runs_and_lease(p_run_ids text[], p_workflows text[], p_versions integer[],
                                                 p_inputs json[], p_idempotency_keys text[],
                                                 p_traceparents text[], p_owners text[], p_ttl_ms bigint[])
RETURNS TABLE (ord bigint, created boolean, acquired boolean, lease_epoch bigint, lease_owner text,
               lease_state text, lease_expires_at bigint, cancel_requested boolean,
               run_id text, workflow text, version integer, input text, idempotency_key text,
               status text, created_at bigint, updated_at bigint, result text, error text,
               attempts integer, traceparent text, forked_from text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_inserted text[];
  v_fresh text[];
  v_other record;
  v_leases jsonb := '{}';
BEGIN
  WITH ins AS (
    INSERT INTO {{schema}}.runs AS r
      (run_id, workflow, version, input, idempotency_key, status, created_at, updated_at, attempts,
       traceparent)
    SELECT c.run_id, c.workflow, c.version, c.input, c.idempotency_key, 'pending', v_now, v_now, 0,
           c.traceparent
    FROM unnest(p_run_ids, p_workflows, p_versions, p_inputs, p_idempotency_keys, p_traceparents)
      AS c(run_id, workflow, version, input, idempotency_key, traceparent)
    ORDER BY c.run_id
    ON CONFLICT DO NOTHING
    RETURNING r.run_id
  )
  SELECT coalesce(array_agg(ins.run_id), '{}') INTO v_inserted FROM ins;

  -- A new run's lease is normally new too: taken at once, as acquire_lease's insert does.
  WITH c AS (
    SELECT c.run_id, c.owner, c.ttl_ms
    FROM unnest(p_run_ids, p_owners, p_ttl_ms) AS c(run_id, owner, ttl_ms)
    WHERE c.run_id = ANY (v_inserted)
  ), fresh AS (
    INSERT INTO {{schema}}.leases AS l (run_id, epoch, owner, state, expires_at, waiting_for)
    SELECT c.run_id, 1, c.owner, 'held', v_now + c.ttl_ms, '{}' FROM c ORDER BY c.run_id
    ON CONFLICT (run_id) DO NOTHING
    RETURNING l.run_id
  )
  SELECT coalesce(array_agg(fresh.run_id), '{}') INTO v_fresh FROM fresh;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = ANY (v_fresh);
  UPDATE {{schema}}.runs r
    SET status = 'running', attempts = r.attempts + 1, updated_at = v_now
    WHERE r.run_id = ANY (v_fresh);

  -- An inserted run whose lease row already existed (left behind by an earlier run of that id):
  -- acquire_lease itself, which decides over that row.
  FOR v_other IN
    SELECT c.run_id, c.owner, c.ttl_ms
    FROM unnest(p_run_ids, p_owners, p_ttl_ms) AS c(run_id, owner, ttl_ms)
    WHERE c.run_id = ANY (v_inserted) AND NOT (c.run_id = ANY (v_fresh))
    ORDER BY c.run_id
  LOOP
    SELECT v_leases || jsonb_build_object(v_other.run_id, to_jsonb(a)) INTO v_leases
      FROM {{schema}}.acquire_lease(v_other.run_id, v_other.owner, v_other.ttl_ms) a;
  END LOOP;

  -- A later statement, so a run a conflicting insert waited for is seen committed. The run id wins
  -- over the key, as in create_run_and_lease.
  RETURN QUERY
    SELECT c.ord, x.created,
           CASE WHEN NOT x.created THEN false WHEN x.fresh THEN true ELSE (a.value->>'acquired')::boolean END,
           CASE WHEN NOT x.created THEN NULL WHEN x.fresh THEN 1::bigint ELSE (a.value->>'lease_epoch')::bigint END,
           CASE WHEN NOT x.created THEN NULL WHEN x.fresh THEN c.owner ELSE a.value->>'lease_owner' END,
           CASE WHEN NOT x.created THEN NULL WHEN x.fresh THEN 'held' ELSE a.value->>'lease_state' END,
           CASE WHEN NOT x.created THEN NULL WHEN x.fresh THEN v_now + c.ttl_ms
                ELSE (a.value->>'lease_expires_at')::bigint END,
           CASE WHEN NOT x.created THEN false
                WHEN x.fresh THEN EXISTS (SELECT 1 FROM {{schema}}.cancel_requests q WHERE q.run_id = c.run_id)
                ELSE (a.value->>'cancel_requested')::boolean END,
           r.run_id, r.workflow, r.version, r.input::text, r.idempotency_key, r.status,
           r.created_at, r.updated_at, r.result::text, r.error::text, r.attempts, r.traceparent,
           r.forked_from::text
    FROM unnest(p_run_ids, p_idempotency_keys, p_owners, p_ttl_ms) WITH ORDINALITY
      AS c(run_id, idempotency_key, owner, ttl_ms, ord)
    CROSS JOIN LATERAL (
      SELECT c.run_id = ANY (v_inserted) AS created, c.run_id = ANY (v_fresh) AS fresh
    ) x
    LEFT JOIN LATERAL (SELECT v_leases -> c.run_id AS value) a ON true
    JOIN LATERAL (
      SELECT r.* FROM {{schema}}.runs r
      WHERE r.run_id = c.run_id
         OR (NOT x.created AND c.idempotency_key IS NOT NULL AND r.idempotency_key = c.idempotency_key)
      ORDER BY (r.run_id = c.run_id) DESC
      LIMIT 1
    ) r ON true;
END $$;

-- close_cancels for each element: the lease rows are locked first (run id order), and the cancel
-- requests are read by a later statement, so a request that took a lease row before this call is
-- seen, as in close_cancels.
CREATE FUNCTION {{schema}}.close_cancels_of(p_run_ids text[], p_epochs bigint[])
RETURNS TABLE (ord bigint, outcome text, cancel_reason text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM {{schema}}.leases l WHERE l.run_id = ANY (p_run_ids) ORDER BY l.run_id FOR UPDATE;
  RETURN QUERY
    WITH a AS (
      SELECT c.ord, c.run_id, c.epoch, q.reason,
             CASE WHEN l.run_id IS NULL OR l.state <> 'held' OR l.epoch <> c.epoch THEN 'fenced'
                  WHEN q.run_id IS NOT NULL THEN 'cancel-requested'
                  ELSE 'closed' END AS outcome
      FROM unnest(p_run_ids, p_epochs) WITH ORDINALITY AS c(run_id, epoch, ord)
      LEFT JOIN {{schema}}.leases l ON l.run_id = c.run_id
      LEFT JOIN {{schema}}.cancel_requests q ON q.run_id = c.run_id
    ), closed AS (
      UPDATE {{schema}}.leases l SET cancels_closed_at = a.epoch
      FROM a WHERE l.run_id = a.run_id AND a.outcome = 'closed'
    )
    SELECT a.ord, a.outcome, CASE WHEN a.outcome = 'cancel-requested' THEN a.reason END FROM a;
END $$;

-- finish_run for each element: outcome, final checkpoint (p_bodies[i] not null), lease finished
-- and timer removal, only under the lease's current, unfinished epoch; `finished` false otherwise.
CREATE FUNCTION {{schema}}.finish_runs(p_run_ids text[], p_epochs bigint[], p_statuses text[],
                                       p_results json[], p_errors json[], p_seqs bigint[],
                                       p_cp_epochs bigint[], p_journal_positions bigint[],
                                       p_cp_statuses text[], p_schema_versions integer[],
                                       p_created_ats bigint[], p_sizes integer[], p_bodies json[])
RETURNS TABLE (ord bigint, finished boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_finished text[];
BEGIN
  PERFORM 1 FROM {{schema}}.leases l WHERE l.run_id = ANY (p_run_ids) ORDER BY l.run_id FOR UPDATE;
  WITH f AS (
    UPDATE {{schema}}.leases l
      SET state = 'finished', owner = NULL, expires_at = NULL, waiting_for = '{}'
      FROM unnest(p_run_ids, p_epochs) AS c(run_id, epoch)
      WHERE l.run_id = c.run_id AND l.epoch = c.epoch AND l.state <> 'finished'
      RETURNING l.run_id
  )
  SELECT coalesce(array_agg(f.run_id), '{}') INTO v_finished FROM f;
  UPDATE {{schema}}.runs r
    SET status = c.status,
        result = CASE WHEN c.status = 'completed' THEN c.result ELSE r.result END,
        error = CASE WHEN c.status = 'completed' THEN r.error ELSE c.error END,
        updated_at = {{schema}}.now_ms()
    FROM unnest(p_run_ids, p_statuses, p_results, p_errors) AS c(run_id, status, result, error)
    WHERE r.run_id = c.run_id AND c.run_id = ANY (v_finished);
  INSERT INTO {{schema}}.checkpoints
    (run_id, seq, epoch, journal_position, status, schema_version, created_at, size, body)
  SELECT c.run_id, c.seq, c.cp_epoch, c.journal_position, c.cp_status, c.schema_version, c.created_at,
         c.size, c.body
  FROM unnest(p_run_ids, p_seqs, p_cp_epochs, p_journal_positions, p_cp_statuses, p_schema_versions,
              p_created_ats, p_sizes, p_bodies)
    WITH ORDINALITY AS c(run_id, seq, cp_epoch, journal_position, cp_status, schema_version, created_at,
                         size, body, ord)
  WHERE c.body IS NOT NULL AND c.run_id = ANY (v_finished)
  ORDER BY c.ord;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = ANY (v_finished);
  RETURN QUERY
    SELECT c.ord, c.run_id = ANY (v_finished)
    FROM unnest(p_run_ids) WITH ORDINALITY AS c(run_id, ord);
END $$;
