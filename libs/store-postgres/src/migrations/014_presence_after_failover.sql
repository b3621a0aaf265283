-- Baton store, version 14: presence survives a failover (or a server restart) without a herd.
--
-- Presence is a session-level advisory lock, and locks are neither replicated to a standby nor
-- kept across a restart: right after a promotion every worker's lock is gone until its presence
-- session reconnects (100 ms to a few seconds), and a dead-worker scan in that window would hand
-- on every held run of the fleet at once. Each scan now notes the server's incarnation (its
-- WAL timeline, which a promotion increments, and its postmaster start time); for a grace period
-- after it changes, the scan hands nothing on. Workers that really died meanwhile are found by
-- lease expiry, as without presence.
CREATE TABLE {{schema}}.server_incarnation (
  id          integer PRIMARY KEY CHECK (id = 1),
  incarnation text NOT NULL,
  changed_at  bigint NOT NULL
);

-- The current incarnation: timeline (first 8 hex digits of the current WAL file name) and the
-- postmaster's start time.
CREATE FUNCTION {{schema}}.current_incarnation()
RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' ||
         (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint::text
$$;

-- True while a change of incarnation is younger than p_grace_ms. The first scan on a schema
-- records the incarnation as old (changed_at 0), so a new store has no grace to sit out.
CREATE FUNCTION {{schema}}.presence_in_grace(p_grace_ms bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint := {{schema}}.now_ms();
  v_current text := {{schema}}.current_incarnation();
  v_row {{schema}}.server_incarnation%ROWTYPE;
BEGIN
  SELECT * INTO v_row FROM {{schema}}.server_incarnation WHERE id = 1;
  IF NOT FOUND THEN
    INSERT INTO {{schema}}.server_incarnation (id, incarnation, changed_at)
      VALUES (1, v_current, 0) ON CONFLICT (id) DO NOTHING;
    RETURN false;
  END IF;
  IF v_row.incarnation <> v_current THEN
    UPDATE {{schema}}.server_incarnation SET incarnation = v_current, changed_at = v_now
      WHERE id = 1 AND incarnation <> v_current;
    RETURN true;
  END IF;
  RETURN v_now - v_row.changed_at < p_grace_ms;
END $$;
