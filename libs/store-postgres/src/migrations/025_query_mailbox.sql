-- Baton store, version 23: queries to runs (QueryMailbox in @baton/core's contracts/query-mailbox.ts).
-- A query is a row for the length of its ask: posted with its request, claimed by the one worker
-- that answers it, given its reply, and deleted by its asker when the ask ends. Nothing here is
-- durable data: a row whose asker died goes once it has expired, swept a few at a time by later
-- posts. Notifications carry ids and names, never values: a request's arguments and a reply are
-- read from the row.
CREATE TABLE {{schema}}.queries (
  query_id   text PRIMARY KEY,
  run_id     text NOT NULL,
  -- The worker asked (the run's lease holder), or NULL for any worker that registers the workflow.
  recipient  text,
  request    json NOT NULL,
  claimed_by text,
  reply      json,
  -- ms since the epoch on this server's clock: past it nobody waits for the row.
  expires_at bigint NOT NULL
);
CREATE INDEX queries_expiry ON {{schema}}.queries (expires_at);

-- Posts a query and tells the workers on p_channel (the schema's queries channel, which every
-- listening store of the schema hears) with p_notice, sent at commit, so no worker hears of a row
-- it cannot read yet. Sweeps up to 100 rows that expired, so the table holds about the asks under
-- way whatever happens to their askers.
CREATE FUNCTION {{schema}}.post_query(
  p_query_id text, p_run_id text, p_recipient text, p_request json, p_ttl_ms bigint,
  p_channel text, p_notice text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {{schema}}.queries q WHERE q.query_id IN (
    SELECT e.query_id FROM {{schema}}.queries e
      WHERE e.expires_at < {{schema}}.now_ms() LIMIT 100 FOR UPDATE SKIP LOCKED);
  INSERT INTO {{schema}}.queries (query_id, run_id, recipient, request, expires_at)
    VALUES (p_query_id, p_run_id, p_recipient, p_request, {{schema}}.now_ms() + p_ttl_ms);
  PERFORM pg_notify(p_channel, p_notice);
END $$;

-- Takes a query to answer it: the request for exactly one worker, NULL for the others and once
-- the row expired or its asker withdrew it.
CREATE FUNCTION {{schema}}.claim_query(p_query_id text, p_worker text)
RETURNS json
LANGUAGE sql AS $$
  UPDATE {{schema}}.queries q SET claimed_by = p_worker
    WHERE q.query_id = p_query_id AND q.claimed_by IS NULL AND q.expires_at > {{schema}}.now_ms()
    RETURNING q.request
$$;

-- Gives a claimed query its reply and tells the askers on p_channel (the schema's replies channel)
-- with the query id, at commit. False, and nothing changes, once the row is gone or answered.
CREATE FUNCTION {{schema}}.answer_query(p_query_id text, p_reply json, p_channel text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {{schema}}.queries q SET reply = p_reply
    WHERE q.query_id = p_query_id AND q.reply IS NULL AND q.expires_at > {{schema}}.now_ms();
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM pg_notify(p_channel, p_query_id);
  RETURN true;
END $$;
