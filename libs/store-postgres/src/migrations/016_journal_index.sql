-- Baton store, version 16: the journal index of group commit across runs (JournalIndex in
-- libs/core/src/contracts/group-journal.ts; journal-index.ts has the invariants).
--
-- Positions are offsets from GROUP_POSITION_BASE (2^50) here: pointer n of a run is at position
-- 2^50 + n. The TypeScript side converts.

-- One row per run the index knows: its pointer count, or that it is journaled on its own. It is a
-- row of its own (not a mark among the pointers) so that each run has one row to lock: an append
-- updates it, so two appends of one run are ordered by its row lock, and a delete that removes it
-- first waits for an append in flight and then sees that append's pointer. Per-run advisory locks
-- would do the same but take a slot of the server's lock table per run, 500 per call.
CREATE TABLE {{schema}}.journal_runs (
  run_id      text PRIMARY KEY,
  own_journal boolean NOT NULL,
  -- The run's pointer count (its last position is 2^50 + pointers); 0 for a run of its own.
  pointers    bigint NOT NULL
);

-- Each pointer of a grouped run: its entries at position 2^50 + n are in record `record` of group
-- log `log`.
CREATE TABLE {{schema}}.journal_pointers (
  run_id text NOT NULL,
  n      bigint NOT NULL,
  log    text NOT NULL,
  record bigint NOT NULL,
  PRIMARY KEY (run_id, n)
);
-- The lowest record any kept run still names, per log (groupLogUse): one index probe per log.
CREATE INDEX journal_pointers_by_record ON {{schema}}.journal_pointers (log, record);

-- Every group log a pointer was accepted into, until forgetGroupLog: the newest record accepted.
CREATE TABLE {{schema}}.group_logs (
  log             text PRIMARY KEY,
  newest_recorded bigint NOT NULL
);

-- appendPointers: the pointers of many runs in one statement. Element i is run p_run_ids[i], whose
-- writer expects p_expected[i] (NULL: a fence marker, none; 0: an empty journal; -1: a position of
-- the run's own journal; else a pointer count), pointing at record p_records[i] of log p_logs[i].
-- Each run is decided on its own, as append-pointers.lua does on Redis; element i's answer is
-- 'a<count>' (appended, the run's count now), 'c<count>' (refused, the run's count) or 'n' (not
-- grouped). Runs are taken in run id order (one run's elements in the order given), so two calls
-- wait for each other's run rows in one order and never deadlock; the logs' rows come last, also
-- in order.
CREATE FUNCTION {{schema}}.append_pointers(p_run_ids text[], p_expected bigint[], p_logs text[],
                                           p_records bigint[])
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_results text[] := array_fill(NULL::text, ARRAY[cardinality(p_run_ids)]);
  v_i bigint;
  v_run text;
  v_expected bigint;
  v_n bigint;
  v_own boolean;
BEGIN
  FOR v_i IN
    SELECT u.i FROM unnest(p_run_ids) WITH ORDINALITY AS u(run_id, i) ORDER BY u.run_id COLLATE "C", u.i
  LOOP
    v_run := p_run_ids[v_i];
    v_expected := p_expected[v_i];
    -- A pass ends undecided only when another transaction created or deleted the run's row between
    -- two statements of this one; the next pass sees what it did.
    FOR v_pass IN 1..5 LOOP
      UPDATE {{schema}}.journal_runs j SET pointers = j.pointers + 1
      WHERE j.run_id = v_run AND NOT j.own_journal AND (v_expected IS NULL OR j.pointers = v_expected)
      RETURNING j.pointers INTO v_n;
      IF FOUND THEN
        INSERT INTO {{schema}}.journal_pointers (run_id, n, log, record)
        VALUES (v_run, v_n, p_logs[v_i], p_records[v_i]);
        v_results[v_i] := 'a' || v_n;
        EXIT;
      END IF;
      SELECT j.own_journal, j.pointers INTO v_own, v_n FROM {{schema}}.journal_runs j WHERE j.run_id = v_run;
      IF FOUND THEN
        IF v_own THEN
          v_results[v_i] := 'n';
          EXIT;
        ELSIF v_expected IS NOT NULL AND v_n <> v_expected THEN
          v_results[v_i] := 'c' || v_n;
          EXIT;
        END IF;
        -- Else the row committed after the UPDATE looked: a run this append would extend.
      ELSIF v_expected IS NULL OR v_expected = 0 THEN
        -- The run's first append: a new run's first pointer, or a fence marker that marks the run as
        -- journaled on its own. Of two first appends at once, the one whose insert lands decides;
        -- the other's insert waits for it, does nothing, and the next pass sees the row.
        INSERT INTO {{schema}}.journal_runs (run_id, own_journal, pointers)
        VALUES (v_run, v_expected IS NULL, CASE WHEN v_expected IS NULL THEN 0 ELSE 1 END)
        ON CONFLICT (run_id) DO NOTHING;
        IF FOUND THEN
          IF v_expected IS NULL THEN
            v_results[v_i] := 'n';
          ELSE
            INSERT INTO {{schema}}.journal_pointers (run_id, n, log, record)
            VALUES (v_run, 1, p_logs[v_i], p_records[v_i]);
            v_results[v_i] := 'a1';
          END IF;
          EXIT;
        END IF;
      ELSE
        -- No pointers, and the writer expects a position of some journal: the run's own.
        v_results[v_i] := 'n';
        EXIT;
      END IF;
    END LOOP;
    IF v_results[v_i] IS NULL THEN
      RAISE EXCEPTION 'append_pointers: run % changed under five passes in a row', v_run
        USING ERRCODE = 'serialization_failure';
    END IF;
  END LOOP;
  INSERT INTO {{schema}}.group_logs AS g (log, newest_recorded)
  SELECT u.log, max(u.record)
  FROM unnest(p_logs, p_records, v_results) AS u(log, record, result)
  WHERE u.result LIKE 'a%'
  GROUP BY u.log
  ORDER BY u.log COLLATE "C"
  ON CONFLICT (log) DO UPDATE SET newest_recorded = greatest(g.newest_recorded, EXCLUDED.newest_recorded);
  RETURN v_results;
END $$;

-- markOwnJournal: marks a run the index does not know as journaled on its own; answers 'own' or
-- 'grouped'. A run already known is only read (no write, no row lock).
CREATE FUNCTION {{schema}}.mark_own_journal(p_run_id text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_own boolean;
BEGIN
  FOR v_pass IN 1..5 LOOP
    INSERT INTO {{schema}}.journal_runs (run_id, own_journal, pointers) VALUES (p_run_id, true, 0)
    ON CONFLICT (run_id) DO NOTHING;
    IF FOUND THEN
      RETURN 'own';
    END IF;
    SELECT j.own_journal INTO v_own FROM {{schema}}.journal_runs j WHERE j.run_id = p_run_id;
    IF FOUND THEN
      RETURN CASE WHEN v_own THEN 'own' ELSE 'grouped' END;
    END IF;
    -- Deleted between the two statements: try again.
  END LOOP;
  RAISE EXCEPTION 'mark_own_journal: run % changed under five passes in a row', p_run_id
    USING ERRCODE = 'serialization_failure';
END $$;

-- forgetGroupLog: forgets p_log when its newest accepted record is still p_newest and no pointer
-- names it. The log's row is locked first and the pointers looked at in a later statement: an
-- append updates the row last, so either it already did (this waits for it, then sees its pointers
-- or the changed record) or it will, after this commits, and inserts the row again (the log is
-- known again, as the contract says).
CREATE FUNCTION {{schema}}.forget_group_log(p_log text, p_newest bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM {{schema}}.group_logs g WHERE g.log = p_log AND g.newest_recorded = p_newest FOR UPDATE;
  IF NOT FOUND OR EXISTS (SELECT 1 FROM {{schema}}.journal_pointers p WHERE p.log = p_log) THEN
    RETURN false;
  END IF;
  DELETE FROM {{schema}}.group_logs g WHERE g.log = p_log;
  RETURN true;
END $$;

-- deletePointers, and the journal part of deleting a run. The run's row goes first: that waits for
-- an append of the run in flight, and the next statement (a new snapshot) sees its pointer too.
CREATE FUNCTION {{schema}}.delete_journal_pointers(p_run_id text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {{schema}}.journal_runs j WHERE j.run_id = p_run_id;
  DELETE FROM {{schema}}.journal_pointers p WHERE p.run_id = p_run_id;
END $$;

-- delete_run of version 6, now also releasing the run's journal pointers in the same transaction.
-- An unknown run's pointers stay (as on every store: only its payloads go).
CREATE OR REPLACE FUNCTION {{schema}}.delete_run(p_run_id text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_state text;
  v_status text;
BEGIN
  SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = p_run_id FOR UPDATE;
  SELECT r.status INTO v_status FROM {{schema}}.runs r WHERE r.run_id = p_run_id FOR UPDATE;
  IF v_state IS NULL AND v_status IS NULL THEN
    DELETE FROM {{schema}}.payloads p WHERE p.run_id = p_run_id;
    RETURN 'unknown';
  END IF;
  IF v_status IS NOT NULL AND v_status NOT IN ('completed', 'failed', 'cancelled') THEN
    RETURN v_status;
  END IF;
  IF v_state IS NOT NULL AND v_state <> 'finished' THEN
    RETURN CASE WHEN v_state = 'held' THEN 'running' ELSE v_state END;
  END IF;
  DELETE FROM {{schema}}.checkpoints c WHERE c.run_id = p_run_id;
  DELETE FROM {{schema}}.signals s WHERE s.run_id = p_run_id;
  DELETE FROM {{schema}}.timers t WHERE t.run_id = p_run_id;
  DELETE FROM {{schema}}.cancel_requests x WHERE x.run_id = p_run_id;
  DELETE FROM {{schema}}.payloads p WHERE p.run_id = p_run_id;
  PERFORM {{schema}}.delete_journal_pointers(p_run_id);
  DELETE FROM {{schema}}.leases l WHERE l.run_id = p_run_id;
  DELETE FROM {{schema}}.runs r WHERE r.run_id = p_run_id;
  RETURN 'deleted';
END $$;

-- delete_expired_runs of version 9, now also releasing each run's journal pointers. It still waits
-- for no lock: a run whose journal row an append holds is skipped, like one whose lease is held.
CREATE OR REPLACE FUNCTION {{schema}}.delete_expired_runs(p_older_than_ms bigint, p_limit integer,
                                                          p_tombstone_ms bigint)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_run_id text;
  v_state text;
BEGIN
  DELETE FROM {{schema}}.run_tombstones t
  WHERE t.run_id IN (SELECT x.run_id FROM {{schema}}.run_tombstones x
                     WHERE x.expires_at <= v_now ORDER BY x.expires_at LIMIT p_limit);
  FOR v_run_id IN
    SELECT r.run_id FROM {{schema}}.runs r
    WHERE r.status IN ('completed', 'failed', 'cancelled') AND r.updated_at <= v_now - p_older_than_ms
    ORDER BY r.updated_at
    LIMIT p_limit
    FOR UPDATE OF r SKIP LOCKED
  LOOP
    SELECT l.state INTO v_state FROM {{schema}}.leases l WHERE l.run_id = v_run_id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      -- No lease row, or one locked by another transaction: only the first may be deleted now.
      CONTINUE WHEN EXISTS (SELECT 1 FROM {{schema}}.leases l WHERE l.run_id = v_run_id);
    ELSIF v_state <> 'finished' THEN
      CONTINUE;
    END IF;
    PERFORM 1 FROM {{schema}}.journal_runs j WHERE j.run_id = v_run_id FOR UPDATE SKIP LOCKED;
    -- No journal row, or one an append holds: only the first may be deleted now.
    CONTINUE WHEN NOT FOUND AND EXISTS (SELECT 1 FROM {{schema}}.journal_runs j WHERE j.run_id = v_run_id);
    DELETE FROM {{schema}}.checkpoints c WHERE c.run_id = v_run_id;
    DELETE FROM {{schema}}.signals s WHERE s.run_id = v_run_id;
    DELETE FROM {{schema}}.timers t WHERE t.run_id = v_run_id;
    DELETE FROM {{schema}}.cancel_requests x WHERE x.run_id = v_run_id;
    DELETE FROM {{schema}}.payloads p WHERE p.run_id = v_run_id;
    -- The journal row is locked by this transaction, so no append of the run can come between.
    DELETE FROM {{schema}}.journal_runs j WHERE j.run_id = v_run_id;
    DELETE FROM {{schema}}.journal_pointers p WHERE p.run_id = v_run_id;
    DELETE FROM {{schema}}.leases l WHERE l.run_id = v_run_id;
    DELETE FROM {{schema}}.runs r WHERE r.run_id = v_run_id;
    INSERT INTO {{schema}}.run_tombstones (run_id, deleted_at, expires_at)
    VALUES (v_run_id, v_now, v_now + p_tombstone_ms)
    ON CONFLICT (run_id) DO UPDATE SET deleted_at = EXCLUDED.deleted_at, expires_at = EXCLUDED.expires_at;
    RETURN NEXT v_run_id;
  END LOOP;
END $$;
