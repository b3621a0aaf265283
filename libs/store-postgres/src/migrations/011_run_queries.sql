-- Baton store, version 11: run queries (listRuns, countRuns; see queries.ts).
--
-- Indexes for listing. A listing is ordered by (created_at, run_id) and pages by keyset, so each
-- filter that narrows a listing well leads an index that ends in that order. run_id is compared
-- under COLLATE "C" (byte order, which for the ASCII run ids is the order JavaScript compares
-- strings in), whatever the database's default collation, so the order and the cursors agree
-- with the other stores. CREATE INDEX indexes the rows already there.
CREATE INDEX runs_by_created ON {{schema}}.runs (created_at, run_id COLLATE "C");
CREATE INDEX runs_by_status_created ON {{schema}}.runs (status, created_at, run_id COLLATE "C");
CREATE INDEX runs_by_workflow_created ON {{schema}}.runs (workflow, created_at, run_id COLLATE "C");
CREATE INDEX runs_by_updated ON {{schema}}.runs (updated_at);
-- Prefix filters are LIKE 'prefix%', which a btree can serve only under pattern (byte) order.
CREATE INDEX runs_by_run_id_prefix ON {{schema}}.runs (run_id text_pattern_ops);
CREATE INDEX runs_by_key_prefix ON {{schema}}.runs (idempotency_key text_pattern_ops)
  WHERE idempotency_key IS NOT NULL;
-- The worker filter (held leases of one owner) uses leases_held_by_owner from version 1.

-- Run counts by workflow and status, kept as runs change. Each (workflow, status) is split over
-- 16 shards by a hash of the run id, so concurrent transactions changing runs of one workflow
-- mostly update different rows instead of queueing on one row lock until commit; a run's +1 and
-- its later -1 land on the same shard, so no shard goes negative. countRuns sums the shards.
CREATE TABLE {{schema}}.run_counts (
  workflow text NOT NULL,
  status   text NOT NULL,
  shard    smallint NOT NULL,
  -- No CHECK (count >= 0): Postgres checks the proposed row of an upsert before resolving the
  -- conflict, so the -1 of a change would be refused before it is added to the row.
  count    bigint NOT NULL,
  PRIMARY KEY (workflow, status, shard)
);

-- Kept by statement-level triggers on runs rather than by each statement that changes a run:
-- a run's status changes in many places (create_run_and_lease, acquire_lease, suspend, wake,
-- finish_run, reopen, deleteRun, the retention sweeps) and a trigger covers all of them, present
-- and future, in the same transaction, so the counts cannot drift from the runs. Statement-level
-- with transition tables, so a sweep deleting a batch updates each counter row once, and always
-- in (workflow, status, shard) order, so two batches never lock counter rows in opposite orders.
-- Three triggers, because a trigger with transition tables may have one event only.
CREATE FUNCTION {{schema}}.run_count_shard(p_run_id text)
RETURNS smallint
LANGUAGE sql IMMUTABLE AS $$ SELECT (hashtext(p_run_id) & 15)::smallint $$;

-- Each trigger adds its statement's net change per counter row; an update that left a run's
-- status as it was nets to zero and touches no row.
CREATE FUNCTION {{schema}}.count_inserted_runs()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {{schema}}.run_counts AS c (workflow, status, shard, count)
  SELECT n.workflow, n.status, {{schema}}.run_count_shard(n.run_id), count(*)
  FROM new_runs n
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE FUNCTION {{schema}}.count_deleted_runs()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- The rows exist (the deleted runs were counted), so this takes the update branch.
  INSERT INTO {{schema}}.run_counts AS c (workflow, status, shard, count)
  SELECT o.workflow, o.status, {{schema}}.run_count_shard(o.run_id), -count(*)
  FROM old_runs o
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE FUNCTION {{schema}}.count_updated_runs()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {{schema}}.run_counts AS c (workflow, status, shard, count)
  SELECT workflow, status, shard, sum(delta)
  FROM (
    SELECT n.workflow, n.status, {{schema}}.run_count_shard(n.run_id) AS shard, 1 AS delta FROM new_runs n
    UNION ALL
    SELECT o.workflow, o.status, {{schema}}.run_count_shard(o.run_id), -1 FROM old_runs o
  ) changes
  GROUP BY 1, 2, 3
  HAVING sum(delta) <> 0
  ORDER BY 1, 2, 3
  ON CONFLICT (workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE TRIGGER runs_counted_on_insert AFTER INSERT ON {{schema}}.runs
  REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_inserted_runs();
CREATE TRIGGER runs_counted_on_update AFTER UPDATE ON {{schema}}.runs
  REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_updated_runs();
CREATE TRIGGER runs_counted_on_delete AFTER DELETE ON {{schema}}.runs
  REFERENCING OLD TABLE AS old_runs
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_deleted_runs();

-- The runs already there. This migration is one transaction, and its first CREATE INDEX holds a
-- SHARE lock on runs until it commits, so no run changes between the triggers and this count:
-- none is counted twice or missed.
INSERT INTO {{schema}}.run_counts (workflow, status, shard, count)
SELECT r.workflow, r.status, {{schema}}.run_count_shard(r.run_id), count(*)
FROM {{schema}}.runs r
GROUP BY 1, 2, 3;
