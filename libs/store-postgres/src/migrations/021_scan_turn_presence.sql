-- Baton store, version 21: a scan's turn is tied to its holder's presence.
--
-- A turn (migration 015) used to pass on only when it ran out (1.5 scan periods after the
-- holder's last renewal), so when the worker that held the dead-worker scan's turn was killed,
-- finding it dead waited for that first: the larger part of such a failover. Now an asker refused
-- by a registered holder whose presence lock no session holds any more (the holder died, or its
-- presence session was lost) takes the turn at once. The probe is one primary-key read and one
-- advisory try-lock on the holder's keys, shared and released with the statement's transaction:
-- O(1), unlike a read of pg_locks, and it writes nothing unless the turn changes hands. A holder
-- with no row in workers (not registered) keeps its turn until it runs out, as before. A wrong
-- verdict (a holder whose session is reconnecting right now) costs one scan run twice, which is
-- safe; a worker whose try-lock meets the probe's shared lock retries as it does on a lost
-- session; a dead-worker scan that reads pg_locks during a probe sees the dead holder's keys
-- granted for that instant and reaps it at its next pass.
CREATE OR REPLACE FUNCTION {{schema}}.take_scan_turn(p_scan text, p_worker text, p_turn_ms bigint)
RETURNS TABLE (held boolean, workers bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_held boolean;
  v_holder text;
  v_k1 integer;
  v_k2 integer;
BEGIN
  UPDATE {{schema}}.scan_turns t SET holder = p_worker, until_ms = v_now + p_turn_ms
    WHERE t.scan = p_scan AND (t.until_ms <= v_now OR t.holder = p_worker);
  v_held := FOUND;
  IF NOT v_held THEN
    SELECT t.holder INTO v_holder FROM {{schema}}.scan_turns t WHERE t.scan = p_scan;
    IF NOT FOUND THEN
      -- The scan's first turn: of two first askers, the one whose insert lands takes it.
      INSERT INTO {{schema}}.scan_turns (scan, holder, until_ms) VALUES (p_scan, p_worker, v_now + p_turn_ms)
        ON CONFLICT (scan) DO NOTHING;
      v_held := FOUND;
    ELSE
      SELECT w.k1, w.k2 INTO v_k1, v_k2 FROM {{schema}}.workers w WHERE w.worker_id = v_holder;
      IF FOUND AND pg_try_advisory_xact_lock_shared(v_k1, v_k2) THEN
        -- No session holds the holder's presence lock: take the turn, unless another asker did.
        UPDATE {{schema}}.scan_turns t SET holder = p_worker, until_ms = v_now + p_turn_ms
          WHERE t.scan = p_scan AND t.holder = v_holder;
        v_held := FOUND;
      END IF;
    END IF;
  END IF;
  RETURN QUERY SELECT v_held, (SELECT count(*) FROM {{schema}}.workers);
END $$;
