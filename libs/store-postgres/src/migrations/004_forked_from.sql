-- Baton store, version 4: a forked run's origin (the run and the checkpoint or journal position it
-- was forked from), kept on its record; NULL for every other run.
ALTER TABLE {{schema}}.runs ADD COLUMN forked_from json;
