-- Baton store, version 27: departed workers (FleetStore; see fleet.ts).
--
-- A report now says how long its worker is kept as departed once the report expires
-- (keep_departed_ms, 0: not kept; rows written before this version keep none). A departed worker
-- is one row: its last report, when the server last heard from it, how it ended (handed-off: it
-- said so when it stopped; expired: a listing found its report past its expiry), when, and when
-- the row is pruned. A listing moves expired reports here and deletes the rows past kept_until;
-- the index finds those without reading the others.
ALTER TABLE {{schema}}.worker_reports ADD COLUMN keep_departed_ms bigint NOT NULL DEFAULT 0;
CREATE TABLE {{schema}}.departed_workers (
  worker_id    text PRIMARY KEY,
  report       json NOT NULL,
  last_seen_at bigint NOT NULL,
  ended        text NOT NULL CHECK (ended IN ('handed-off', 'expired')),
  ended_at     bigint NOT NULL,
  kept_until   bigint NOT NULL
);
CREATE INDEX departed_workers_by_kept_until ON {{schema}}.departed_workers (kept_until);
