-- Baton store, version 13: the workers' reports (FleetStore; see fleet.ts).
--
-- One row per worker: its latest report as the worker sent it (checked and normalized by the
-- store before the write; json, the text as written, like every other value here), when the
-- server received it and when it stops being listed. A listing
-- deletes the rows past their expiry; the index finds them without reading the live ones.
CREATE TABLE {{schema}}.worker_reports (
  worker_id    text PRIMARY KEY,
  report       json NOT NULL,
  last_seen_at bigint NOT NULL,
  expires_at   bigint NOT NULL
);
CREATE INDEX worker_reports_by_expiry ON {{schema}}.worker_reports (expires_at);
