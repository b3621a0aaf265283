/**
 * The pool's prepared statements on a real server: statements go out named (parsed once per
 * connection), not at all with `preparedStatements: false`; a statement the server no longer has
 * (what a pooler in transaction mode causes) is sent unprepared and preparing stops; a statement
 * whose result type a migration changed (the server refuses its cached plan) is sent again, and
 * then under a new name.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresTestUrl } from '@baton/testing/servers';
import { Db } from './db.js';
import { resolvePostgresStoreOptions } from './options.js';

const open: Db[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((db) => db.end()));
});

/** A pool of one connection, so every statement runs in the session the checks look at. */
function db(preparedStatements?: boolean): Db {
  const made = new Db(
    resolvePostgresStoreOptions({
      url: postgresTestUrl(),
      poolSize: 1,
      ...(preparedStatements !== undefined && { preparedStatements }),
    }),
  );
  open.push(made);
  return made;
}

/** The session's prepared statements of the store, read unprepared. */
async function prepared(d: Db): Promise<string[]> {
  const { rows } = await d.pool.query<{ statement: string }>(
    "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'baton\\_%' ORDER BY statement",
  );
  return rows.map((r) => r.statement);
}

describe('the postgres store pool', () => {
  it('prepares each statement once per connection, and none when told not to', async () => {
    const on = db();
    for (let i = 0; i < 3; i++)
      expect(await on.query('SELECT $1::int + 1 AS n', [i])).toEqual([{ n: i + 1 }]);
    expect(await prepared(on)).toEqual(['SELECT $1::int + 1 AS n']);
    const off = db(false);
    expect(await off.query('SELECT $1::int + 1 AS n', [1])).toEqual([{ n: 2 }]);
    expect(await prepared(off)).toEqual([]);
    expect(off.preparing).toBe(false);
  });

  it('sends a statement the server lost unprepared, and stops preparing', async () => {
    const d = db();
    await d.query('SELECT 41 + $1::int AS n', [1]);
    // Behind pg's back, as a pooler in transaction mode does by moving the session.
    await d.pool.query('DEALLOCATE ALL');
    expect(await d.query('SELECT 41 + $1::int AS n', [1])).toEqual([{ n: 42 }]);
    expect(d.preparing).toBe(false);
    expect(await d.query('SELECT 41 + $1::int AS n', [2])).toEqual([{ n: 43 }]);
    expect(await prepared(d)).toEqual([]);
  });

  it('keeps a prepared statement working when a migration changes what it returns', async () => {
    const d = db();
    const table = `prep_${randomBytes(4).toString('hex')}`;
    await d.pool.query(`CREATE TABLE public.${table} (a int); INSERT INTO public.${table} VALUES (1)`);
    try {
      expect(await d.query(`SELECT * FROM public.${table} WHERE $1::int = 1`, [1])).toEqual([{ a: 1 }]);
      await d.pool.query(`ALTER TABLE public.${table} ALTER COLUMN a TYPE text`);
      expect(await d.query(`SELECT * FROM public.${table} WHERE $1::int = 1`, [1])).toEqual([{ a: '1' }]);
      expect(await d.query(`SELECT * FROM public.${table} WHERE $1::int = 1`, [1])).toEqual([{ a: '1' }]);
      expect(d.preparing).toBe(true);
      const statements = await prepared(d);
      expect(statements.length).toBeGreaterThan(0);
      expect(new Set(statements)).toEqual(new Set([`SELECT * FROM public.${table} WHERE $1::int = 1`]));
    } finally {
      await d.pool.query(`DROP TABLE public.${table}`);
    }
  });
});
