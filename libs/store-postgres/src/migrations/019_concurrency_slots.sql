-- Baton store, version 19: concurrency slots per key (ConcurrencyStore in @baton/core's
-- contracts/concurrency.ts). Per key: the runs holding a slot, and the line of runs waiting for
-- one in arrival order. Every call for a key locks its slot_keys row first, so the calls of one
-- key are serialized and the calls of different keys never wait for each other.
CREATE TABLE {{schema}}.slot_keys (
  key      text PRIMARY KEY,
  next_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE {{schema}}.slot_holders (
  key    text NOT NULL,
  run_id text NOT NULL,
  PRIMARY KEY (key, run_id)
);
CREATE TABLE {{schema}}.slot_waiting (
  key    text NOT NULL,
  run_id text NOT NULL,
  seq    bigint NOT NULL,
  PRIMARY KEY (key, run_id)
);
CREATE INDEX slot_waiting_in_order ON {{schema}}.slot_waiting (key, seq);

-- A run that may hold or be handed a slot: its record exists and it has not finished.
CREATE FUNCTION {{schema}}.slot_run_live(p_run_id text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM {{schema}}.runs r
                 WHERE r.run_id = p_run_id AND r.status NOT IN ('completed', 'failed', 'cancelled'))
$$;

-- Forgets holders whose run finished or is gone, then hands free slots to the line's head (runs
-- that finished meanwhile leave the line instead). A run handed a slot gets its timer due now if
-- its lease is suspended, so the timer scan wakes it should the caller's wake message be lost.
-- The caller holds the key's slot_keys row lock. Returns the runs handed a slot.
CREATE FUNCTION {{schema}}.settle_slots(p_key text, p_limit integer) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_woken text[] := '{}';
  v_head text;
BEGIN
  DELETE FROM {{schema}}.slot_holders h WHERE h.key = p_key AND NOT {{schema}}.slot_run_live(h.run_id);
  LOOP
    EXIT WHEN (SELECT count(*) FROM {{schema}}.slot_holders h WHERE h.key = p_key) >= p_limit;
    DELETE FROM {{schema}}.slot_waiting w
      WHERE w.key = p_key
        AND w.run_id = (SELECT x.run_id FROM {{schema}}.slot_waiting x WHERE x.key = p_key ORDER BY x.seq LIMIT 1)
      RETURNING w.run_id INTO v_head;
    EXIT WHEN v_head IS NULL;
    -- A paused run leaves the line too (it joins again when resumed): it could not use the slot.
    CONTINUE WHEN NOT {{schema}}.slot_run_live(v_head)
      OR EXISTS (SELECT 1 FROM {{schema}}.runs r WHERE r.run_id = v_head AND r.status = 'paused');
    INSERT INTO {{schema}}.slot_holders (key, run_id) VALUES (p_key, v_head) ON CONFLICT DO NOTHING;
    INSERT INTO {{schema}}.timers (run_id, due_at)
      SELECT v_head, v_now FROM {{schema}}.leases l WHERE l.run_id = v_head AND l.state = 'suspended'
      ON CONFLICT (run_id) DO UPDATE SET due_at = EXCLUDED.due_at;
    v_woken := v_woken || v_head;
  END LOOP;
  RETURN v_woken;
END $$;

CREATE FUNCTION {{schema}}.acquire_slot(p_key text, p_limit integer, p_run_id text)
RETURNS TABLE (acquired boolean, wake text[])
LANGUAGE plpgsql AS $$
DECLARE
  v_wake text[];
  v_seq bigint;
BEGIN
  INSERT INTO {{schema}}.slot_keys (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
  SELECT k.next_seq INTO v_seq FROM {{schema}}.slot_keys k WHERE k.key = p_key FOR UPDATE;
  v_wake := {{schema}}.settle_slots(p_key, p_limit);
  IF EXISTS (SELECT 1 FROM {{schema}}.slot_holders h WHERE h.key = p_key AND h.run_id = p_run_id) THEN
    RETURN QUERY SELECT true, v_wake;
  ELSIF (SELECT count(*) FROM {{schema}}.slot_holders h WHERE h.key = p_key) < p_limit
        AND NOT EXISTS (SELECT 1 FROM {{schema}}.slot_waiting w WHERE w.key = p_key) THEN
    INSERT INTO {{schema}}.slot_holders (key, run_id) VALUES (p_key, p_run_id);
    RETURN QUERY SELECT true, v_wake;
  ELSE
    IF NOT EXISTS (SELECT 1 FROM {{schema}}.slot_waiting w WHERE w.key = p_key AND w.run_id = p_run_id) THEN
      UPDATE {{schema}}.slot_keys k SET next_seq = v_seq + 1 WHERE k.key = p_key;
      INSERT INTO {{schema}}.slot_waiting (key, run_id, seq) VALUES (p_key, p_run_id, v_seq + 1);
    END IF;
    RETURN QUERY SELECT false, v_wake;
  END IF;
END $$;

CREATE FUNCTION {{schema}}.release_slot(p_key text, p_limit integer, p_run_id text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_wake text[];
BEGIN
  PERFORM 1 FROM {{schema}}.slot_keys k WHERE k.key = p_key FOR UPDATE;
  IF NOT FOUND THEN
    RETURN '{}';
  END IF;
  DELETE FROM {{schema}}.slot_holders h WHERE h.key = p_key AND h.run_id = p_run_id;
  DELETE FROM {{schema}}.slot_waiting w WHERE w.key = p_key AND w.run_id = p_run_id;
  v_wake := {{schema}}.settle_slots(p_key, p_limit);
  IF NOT EXISTS (SELECT 1 FROM {{schema}}.slot_holders h WHERE h.key = p_key)
     AND NOT EXISTS (SELECT 1 FROM {{schema}}.slot_waiting w WHERE w.key = p_key) THEN
    DELETE FROM {{schema}}.slot_keys k WHERE k.key = p_key;
  END IF;
  RETURN v_wake;
END $$;
