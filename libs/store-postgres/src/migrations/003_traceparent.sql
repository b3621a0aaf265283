-- Baton store, version 3: the W3C trace context of the producer that started a run, so the spans
-- of every later attempt (on any worker) join the producer's trace.
ALTER TABLE {{schema}}.runs ADD COLUMN traceparent text;
