-- Baton store, version 18: schedules (ScheduleStore; see schedules.ts).
--
-- One row per schedule: the schedule as written (json, checked by the store first), its revision
-- (every write is a compare-and-set on it: UPDATE ... WHERE revision = expected, which a second
-- writer, waiting for the first's row lock, re-reads and finds changed), the stamps on the server's
-- clock, and the columns the listing and the due scan filter on. Ids sort bytewise (COLLATE "C"),
-- as the other stores list them. The due scan reads only the partial index of schedules that are
-- not paused and have a next firing.
CREATE TABLE {{schema}}.schedules (
  schedule_id  text COLLATE "C" PRIMARY KEY,
  workflow     text NOT NULL,
  paused       boolean NOT NULL,
  next_fire_at bigint,
  revision     bigint NOT NULL,
  created_at   bigint NOT NULL,
  updated_at   bigint NOT NULL,
  schedule     json NOT NULL
);
CREATE INDEX schedules_due ON {{schema}}.schedules (next_fire_at)
  WHERE NOT paused AND next_fire_at IS NOT NULL;
