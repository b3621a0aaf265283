-- Baton store, version 1: the tables. Every name is qualified with {{schema}}, which the loader
-- replaces with the store's quoted schema. Times are ms since the Unix epoch on the server's
-- clock (bigint), so an expiry written by one statement compares exactly with the next.
-- User values (run input, results, errors, signal payloads, checkpoints) are `json`, not `jsonb`:
-- json keeps the writer's text as it is (key order included) and accepts every string a JSON
-- encoder produces, where jsonb refuses "\u0000" and would fail a checkpoint over one NUL.

-- Leases: who owns a run, under which fencing epoch. A run has a lease row from its first claim on.
CREATE TABLE {{schema}}.leases (
  run_id      text PRIMARY KEY,
  epoch       bigint NOT NULL CHECK (epoch > 0),
  owner       text,
  state       text NOT NULL CHECK (state IN ('held', 'suspended', 'finished')),
  -- Set while held (an ownerless held lease uses it only to pace the reaper); null otherwise.
  expires_at  bigint,
  -- Signal names a suspended run waits for.
  waiting_for text[] NOT NULL DEFAULT '{}'
);
-- The reaper's scan: expired held leases, oldest expiry first.
CREATE INDEX leases_held_by_expiry ON {{schema}}.leases (expires_at) WHERE state = 'held';
-- The dead-worker scan: held leases of one owner.
CREATE INDEX leases_held_by_owner ON {{schema}}.leases (owner) WHERE state = 'held';

-- Cancel flags live apart from leases: a run may be cancelled before any worker claimed it.
CREATE TABLE {{schema}}.cancel_requests (
  run_id       text PRIMARY KEY,
  requested_at bigint NOT NULL
);

-- The run index. A null idempotency key never conflicts (nulls are distinct in a unique index).
CREATE TABLE {{schema}}.runs (
  run_id          text PRIMARY KEY,
  workflow        text NOT NULL,
  version         integer NOT NULL,
  input           json,
  idempotency_key text UNIQUE,
  status          text NOT NULL
    CHECK (status IN ('pending', 'running', 'suspended', 'completed', 'failed', 'cancelled')),
  created_at      bigint NOT NULL,
  updated_at      bigint NOT NULL,
  result          json,
  error           json,
  attempts        integer NOT NULL DEFAULT 0
);

-- Checkpoint history. `id` orders a run's checkpoints as they were written; the summary columns
-- are copies of fields of `body` so listing the history never reads the bodies.
CREATE TABLE {{schema}}.checkpoints (
  id               bigserial PRIMARY KEY,
  run_id           text NOT NULL,
  seq              bigint NOT NULL,
  epoch            bigint NOT NULL,
  journal_position bigint NOT NULL,
  status           text NOT NULL,
  schema_version   integer NOT NULL,
  created_at       bigint NOT NULL,
  -- Encoded size of the checkpoint in bytes (UTF-8 JSON, as the writer encoded it).
  size             integer NOT NULL,
  body             json NOT NULL
);
CREATE INDEX checkpoints_by_run ON {{schema}}.checkpoints (run_id, id);

-- Timers of suspended runs. A row exists only while its run's lease is suspended.
CREATE TABLE {{schema}}.timers (
  run_id text PRIMARY KEY,
  due_at bigint NOT NULL
);
CREATE INDEX timers_by_due ON {{schema}}.timers (due_at);

-- Signal inboxes. `id` keeps arrival order; a repeated signal id is ignored.
CREATE TABLE {{schema}}.signals (
  id          bigserial PRIMARY KEY,
  run_id      text NOT NULL,
  signal_id   text NOT NULL,
  name        text NOT NULL,
  payload     json,
  received_at bigint NOT NULL,
  UNIQUE (run_id, signal_id)
);

-- Registered workers and the two keys of the session-level advisory lock their presence
-- connection holds. A worker is alive while that lock is granted (see the live_workers view).
CREATE TABLE {{schema}}.workers (
  worker_id     text PRIMARY KEY,
  k1            integer NOT NULL,
  k2            integer NOT NULL,
  registered_at bigint NOT NULL
);
