-- Baton store, version 17: the fleet's published member list (PresenceStore.publishMembership,
-- readMembership).
--
-- Kafka's partition ownership needs the live workers every period on every worker. Listing them
-- reads pg_locks (O(fleet)), so every worker listing them every period cost the fleet's square.
-- Now the holder of the 'membership' scan turn (migration 015) lists them and publishes the list
-- here; every other worker reads this one row by its primary key, and reads the list itself only
-- when the generation moved.
CREATE TABLE {{schema}}.membership (
  -- One row: the fleet of this schema.
  id         smallint PRIMARY KEY CHECK (id = 1),
  -- Moves exactly when the member set changes; never reused (at least the store's clock in ms).
  generation bigint NOT NULL,
  -- Sorted bytewise, without repeats (publish_membership sorts them), so equal sets compare equal.
  members    text[] NOT NULL
);

-- Publishes p_members (any order, repeats allowed) and returns the generation now published.
-- The same set as published: nothing is locked or written (the holder publishes every period,
-- and the set rarely changes). Two publishers racing: the row lock orders them, and the second
-- one's set either equals the first's (the generation stays) or moves it again.
CREATE FUNCTION {{schema}}.publish_membership(p_members text[])
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_members text[] := ARRAY(SELECT DISTINCT m COLLATE "C" FROM unnest(p_members) AS u(m) ORDER BY 1);
  v_generation bigint;
BEGIN
  SELECT m.generation INTO v_generation FROM {{schema}}.membership m
    WHERE m.id = 1 AND m.members = v_members;
  IF FOUND THEN
    RETURN v_generation;
  END IF;
  INSERT INTO {{schema}}.membership AS m (id, generation, members)
    VALUES (1, {{schema}}.now_ms(), v_members)
    ON CONFLICT (id) DO UPDATE
      SET generation = greatest(m.generation + 1, {{schema}}.now_ms()), members = EXCLUDED.members
      WHERE m.members IS DISTINCT FROM EXCLUDED.members
    RETURNING m.generation INTO v_generation;
  IF v_generation IS NULL THEN
    -- Another publisher wrote the same set between the check and the insert.
    SELECT m.generation INTO v_generation FROM {{schema}}.membership m WHERE m.id = 1;
  END IF;
  RETURN v_generation;
END $$;
