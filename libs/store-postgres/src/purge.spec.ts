/**
 * The objects a store's schema holds, as `baton admin drop` tells them from another application's:
 * every table, view and function a migration creates, and the migrations' own table.
 */
import { describe, expect, it } from 'vitest';
import { loadMigrations } from './migrations.js';
import { storeObjectNames } from './purge.js';

describe("the Postgres store's objects", () => {
  const names = storeObjectNames();

  it('are every table, view and function a migration creates', () => {
    const created = loadMigrations().flatMap(({ sql }) =>
      [...sql.matchAll(/CREATE\b[^;(]*?\{\{schema\}\}\.(\w+)/gi)].map((m) => m[1]!),
    );
    // An index or a trigger names its table there (`CREATE INDEX … ON {{schema}}.runs`).
    expect(created.length).toBeGreaterThan(40);
    expect(created.filter((name) => !names.has(name))).toEqual([]);
  });

  it('hold the tables a store reads and its migrations table, and nothing else by accident', () => {
    for (const name of [
      'runs',
      'leases',
      'checkpoints',
      'schedules',
      'payloads',
      'live_workers',
      'schema_migrations',
    ])
      expect(names.has(name), name).toBe(true);
    expect(names.has('invoices')).toBe(false);
  });
});
