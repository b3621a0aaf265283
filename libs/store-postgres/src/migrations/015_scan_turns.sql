-- Baton store, version 15: turns of the fleet-wide scans (PresenceStore.takeScanTurn).
--
-- The dead-worker scan reads every worker's presence lock (pg_locks, O(fleet)); run by every
-- worker every period it would cost the fleet's square. One row per scan names the worker whose
-- turn it is and until when (store clock, ms). A worker asking while another holds the turn
-- changes nothing: the UPDATE's condition fails before any row is locked, so no transaction id is
-- taken and nothing is written to the WAL; only a taken or renewed turn writes.
CREATE TABLE {{schema}}.scan_turns (
  scan     text PRIMARY KEY,
  holder   text NOT NULL,
  until_ms bigint NOT NULL
);

-- Whether p_worker holds the turn of p_scan now (it was free, had run out, or was p_worker's and
-- is renewed), for p_turn_ms, and how many workers are registered (the askers' cue to ask less
-- often in a large fleet). Two callers racing for a free turn: the second's UPDATE waits for the
-- first's row lock, reads the row again and finds the turn taken.
CREATE FUNCTION {{schema}}.take_scan_turn(p_scan text, p_worker text, p_turn_ms bigint)
RETURNS TABLE (held boolean, workers bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_held boolean;
BEGIN
  UPDATE {{schema}}.scan_turns t SET holder = p_worker, until_ms = v_now + p_turn_ms
    WHERE t.scan = p_scan AND (t.until_ms <= v_now OR t.holder = p_worker);
  v_held := FOUND;
  IF NOT v_held AND NOT EXISTS (SELECT 1 FROM {{schema}}.scan_turns t WHERE t.scan = p_scan) THEN
    -- The scan's first turn: of two first askers, the one whose insert lands takes it.
    INSERT INTO {{schema}}.scan_turns (scan, holder, until_ms) VALUES (p_scan, p_worker, v_now + p_turn_ms)
      ON CONFLICT (scan) DO NOTHING;
    v_held := FOUND;
  END IF;
  RETURN QUERY SELECT v_held, (SELECT count(*) FROM {{schema}}.workers);
END $$;
