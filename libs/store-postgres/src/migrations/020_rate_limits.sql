-- Baton store, version 20: rate limits (RateLimitStore in @baton/core's contracts/rate-limits.ts).
-- Per limit name and key, the times of the grants still inside the window (a sliding log), oldest
-- first. Every call upserts its row first, which locks it: calls of one name and key are
-- serialized, calls of different ones never wait for each other.
CREATE TABLE {{schema}}.rate_logs (
  name       text NOT NULL,
  key        text NOT NULL,
  -- Grant times, ms since the epoch on this server's clock, oldest first.
  grants     bigint[] NOT NULL DEFAULT '{}',
  -- When the newest grant leaves its window: past it the row says nothing and may go.
  expires_at bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (name, key)
);
CREATE INDEX rate_logs_expiry ON {{schema}}.rate_logs (expires_at);

-- One ask for a place: granted (and recorded) when fewer than p_limit grants are inside the last
-- p_per ms, else refused with the ms until the grant whose leaving frees a place leaves. The time
-- is read after the row lock (clock_timestamp, not the transaction's now()): a caller that waited
-- for the lock records the time it was granted, not the time it started waiting, so no two
-- recorded grants are closer than they really were.
CREATE FUNCTION {{schema}}.take_rate_token(p_name text, p_key text, p_limit integer, p_per bigint)
RETURNS TABLE (granted boolean, wait_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_grants bigint[];
  v_now bigint;
  v_held integer;
BEGIN
  INSERT INTO {{schema}}.rate_logs AS l (name, key) VALUES (p_name, p_key)
    ON CONFLICT (name, key) DO UPDATE SET grants = l.grants
    RETURNING l.grants INTO v_grants;
  v_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  v_grants := ARRAY(SELECT g FROM unnest(v_grants) AS g WHERE g > v_now - p_per ORDER BY g);
  v_held := cardinality(v_grants);
  IF v_held < p_limit THEN
    UPDATE {{schema}}.rate_logs l SET grants = v_grants || v_now, expires_at = v_now + p_per
      WHERE l.name = p_name AND l.key = p_key;
    -- Logs of limits nobody asked for within their window (a per-customer key of a customer gone
    -- quiet) go a few at a time, so the table holds about the keys in use.
    DELETE FROM {{schema}}.rate_logs l WHERE l.ctid IN (
      SELECT x.ctid FROM {{schema}}.rate_logs x WHERE x.expires_at < v_now
      LIMIT 16 FOR UPDATE SKIP LOCKED);
    RETURN QUERY SELECT true, 0::bigint;
  ELSE
    UPDATE {{schema}}.rate_logs l SET grants = v_grants WHERE l.name = p_name AND l.key = p_key;
    RETURN QUERY SELECT false, greatest(1, v_grants[v_held - p_limit + 1] + p_per - v_now);
  END IF;
END $$;
