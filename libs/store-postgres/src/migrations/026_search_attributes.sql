-- Baton store, version 23: search attributes (attributes.ts; docs/search-attributes.md), typed
-- fields a workflow sets on its run, listed and counted by the run queries.
--
-- Kept three ways, each in the transaction that changes it:
-- 1. runs.attributes: the run's attributes as the record shows them ({"name": {"type", "value"}}),
--    NULL for a run that set none. jsonb (not json as the user values of version 1): a merge is
--    `||`, and a name or keyword holds no NUL (core refuses one), the one thing jsonb refuses.
-- 2. run_attributes: one row per (run, name), the side table the filters use. It repeats the
--    run's created_at (so an index on a value is in the listing's order and pages by keyset
--    straight from it), its workflow and its status (so the counts below need no join). An
--    alternative, a GIN index on runs.attributes, finds a value's runs but not in created_at
--    order: a page of a common value then sorts every match (docs/performance.md, "Search
--    attributes at a million runs", measures both).
-- 3. run_attribute_counts: runs per keyword or boolean value, by workflow and status, sharded as
--    run_counts is (version 11), kept by statement-level triggers on run_attributes.
-- A run's status reaches its run_attributes rows through a row trigger on runs that fires only when
-- the status changes on a run that has attributes (its WHEN clause), so a run without attributes
-- pays nothing on its status changes. Deleting a run deletes its rows (ON DELETE CASCADE), whoever
-- deletes it (delete_run, the retention sweeps).
ALTER TABLE {{schema}}.runs ADD COLUMN attributes jsonb;

CREATE TABLE {{schema}}.run_attributes (
  run_id     text NOT NULL REFERENCES {{schema}}.runs (run_id) ON DELETE CASCADE,
  name       text NOT NULL,
  type       text NOT NULL CHECK (type IN ('keyword', 'boolean', 'number', 'time')),
  -- A keyword's value, or 'true' / 'false'; NULL for a number or a time.
  keyword    text,
  -- A number, or a time in ms; NULL for a keyword or a boolean.
  num        double precision,
  created_at bigint NOT NULL,
  workflow   text NOT NULL,
  status     text NOT NULL,
  PRIMARY KEY (run_id, name),
  CHECK ((keyword IS NULL) <> (num IS NULL))
);
-- Equality on a keyword or boolean (and on a number or time), in the listing's order, run id under
-- COLLATE "C" as in version 11's indexes, so a page is a walk of one index from the cursor.
CREATE INDEX run_attributes_by_keyword
  ON {{schema}}.run_attributes (name, type, keyword, created_at, run_id COLLATE "C") WHERE keyword IS NOT NULL;
CREATE INDEX run_attributes_by_number
  ON {{schema}}.run_attributes (name, type, num, created_at, run_id COLLATE "C") WHERE num IS NOT NULL;
-- A range of a number or time in the listing's order: a wide range walks its attribute's rows from
-- the cursor testing each value (in the index: no heap visit), a narrow one reads by_number and sorts.
CREATE INDEX run_attributes_by_name_created
  ON {{schema}}.run_attributes (name, type, created_at, run_id COLLATE "C") INCLUDE (num) WHERE num IS NOT NULL;

CREATE TABLE {{schema}}.run_attribute_counts (
  name     text NOT NULL,
  type     text NOT NULL,
  keyword  text NOT NULL,
  workflow text NOT NULL,
  status   text NOT NULL,
  shard    smallint NOT NULL,
  -- No CHECK (count >= 0), for the reason version 11 gives.
  count    bigint NOT NULL,
  PRIMARY KEY (name, type, keyword, workflow, status, shard)
);

CREATE FUNCTION {{schema}}.count_inserted_attributes()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {{schema}}.run_attribute_counts AS c (name, type, keyword, workflow, status, shard, count)
  SELECT n.name, n.type, n.keyword, n.workflow, n.status, {{schema}}.run_count_shard(n.run_id), count(*)
  FROM new_attributes n
  WHERE n.keyword IS NOT NULL
  GROUP BY 1, 2, 3, 4, 5, 6
  ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (name, type, keyword, workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE FUNCTION {{schema}}.count_deleted_attributes()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {{schema}}.run_attribute_counts AS c (name, type, keyword, workflow, status, shard, count)
  SELECT o.name, o.type, o.keyword, o.workflow, o.status, {{schema}}.run_count_shard(o.run_id), -count(*)
  FROM old_attributes o
  WHERE o.keyword IS NOT NULL
  GROUP BY 1, 2, 3, 4, 5, 6
  ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (name, type, keyword, workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE FUNCTION {{schema}}.count_updated_attributes()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {{schema}}.run_attribute_counts AS c (name, type, keyword, workflow, status, shard, count)
  SELECT name, type, keyword, workflow, status, shard, sum(delta)
  FROM (
    SELECT n.name, n.type, n.keyword, n.workflow, n.status, {{schema}}.run_count_shard(n.run_id) AS shard,
           1 AS delta
    FROM new_attributes n WHERE n.keyword IS NOT NULL
    UNION ALL
    SELECT o.name, o.type, o.keyword, o.workflow, o.status, {{schema}}.run_count_shard(o.run_id), -1
    FROM old_attributes o WHERE o.keyword IS NOT NULL
  ) changes
  GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum(delta) <> 0
  ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (name, type, keyword, workflow, status, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE TRIGGER run_attributes_counted_on_insert AFTER INSERT ON {{schema}}.run_attributes
  REFERENCING NEW TABLE AS new_attributes
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_inserted_attributes();
CREATE TRIGGER run_attributes_counted_on_update AFTER UPDATE ON {{schema}}.run_attributes
  REFERENCING OLD TABLE AS old_attributes NEW TABLE AS new_attributes
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_updated_attributes();
CREATE TRIGGER run_attributes_counted_on_delete AFTER DELETE ON {{schema}}.run_attributes
  REFERENCING OLD TABLE AS old_attributes
  FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.count_deleted_attributes();

-- A run's new status, onto its attribute rows (which the counts follow).
CREATE FUNCTION {{schema}}.attributes_follow_status()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {{schema}}.run_attributes a SET status = NEW.status WHERE a.run_id = NEW.run_id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER runs_attributes_follow_status AFTER UPDATE OF status ON {{schema}}.runs
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.attributes IS NOT NULL)
  EXECUTE FUNCTION {{schema}}.attributes_follow_status();

-- attributes.set: applies p_changes ({"name": {"type", "value"} or null}) to the run's record,
-- rows and counts, only while p_epoch is the lease's epoch and the lease is not finished. The
-- lease row is locked first (shared), then the run's, the order every other function takes them.
-- Returns 'ok', or 'fenced'. A lease without a run row keeps nothing ('ok').
CREATE FUNCTION {{schema}}.set_run_attributes(p_run_id text, p_epoch bigint, p_changes jsonb)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_run record;
  v_merged jsonb;
BEGIN
  PERFORM 1 FROM {{schema}}.leases l
    WHERE l.run_id = p_run_id AND l.epoch = p_epoch AND l.state <> 'finished'
    FOR SHARE;
  IF NOT FOUND THEN
    RETURN 'fenced';
  END IF;
  SELECT r.workflow, r.status, r.created_at, r.attributes INTO v_run
    FROM {{schema}}.runs r WHERE r.run_id = p_run_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'ok';
  END IF;
  v_merged := jsonb_strip_nulls(coalesce(v_run.attributes, '{}'::jsonb) || p_changes);
  -- Only what changed moves: an unchanged value keeps its row (and its count) as it was.
  DELETE FROM {{schema}}.run_attributes a
    WHERE a.run_id = p_run_id
      AND a.name IN (SELECT c.key FROM jsonb_each(p_changes) c
                     WHERE c.value IS DISTINCT FROM v_run.attributes -> c.key);
  INSERT INTO {{schema}}.run_attributes (run_id, name, type, keyword, num, created_at, workflow, status)
  SELECT p_run_id, c.key, c.value ->> 'type',
         CASE WHEN c.value ->> 'type' IN ('keyword', 'boolean') THEN c.value ->> 'value' END,
         CASE WHEN c.value ->> 'type' IN ('number', 'time') THEN (c.value ->> 'value')::double precision END,
         v_run.created_at, v_run.workflow, v_run.status
  FROM jsonb_each(p_changes) c
  WHERE jsonb_typeof(c.value) = 'object' AND c.value IS DISTINCT FROM v_run.attributes -> c.key;
  UPDATE {{schema}}.runs r
    SET attributes = CASE WHEN v_merged = '{}'::jsonb THEN NULL ELSE v_merged END
    WHERE r.run_id = p_run_id AND r.attributes IS DISTINCT FROM
      (CASE WHEN v_merged = '{}'::jsonb THEN NULL ELSE v_merged END);
  RETURN 'ok';
END $$;
