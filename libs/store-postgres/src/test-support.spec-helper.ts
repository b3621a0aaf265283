/**
 * Shared by the integration specs: unique schemas (dropped afterwards, so the shared database
 * does not accumulate them), an admin connection, and waiting for a condition.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresTestUrl } from '@baton/testing/servers';
import { postgresStore, type PostgresStoreOptions } from './index.js';
import type { PresenceStore, Store } from '@baton/core/adapter';

/** The test database's URL. */
export const url = postgresTestUrl();

/** A schema or role name no other test (or earlier run) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Runs one statement as the test database's (superuser) role. */
export async function admin<R extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** Hands out unique schemas and drops every one of them in `dropAll`. */
export class TestSchemas {
  private readonly names: string[] = [];

  name(): string {
    const schema = uniqueName('t');
    this.names.push(schema);
    return schema;
  }

  /** A store on a fresh schema (small pool: the server is shared with other suites). */
  store(options: PostgresStoreOptions = {}): Store & { readonly presence: PresenceStore } {
    return postgresStore({ url, schema: this.name(), poolSize: 4, ...options });
  }

  async dropAll(): Promise<void> {
    const names = this.names.splice(0);
    for (const schema of names) await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

/** Polls `check` until it returns true; fails after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Backends of this database with the given application_name. */
export async function backendsOf(applicationName: string): Promise<{ pid: number }[]> {
  return admin<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
    [applicationName],
  );
}

/**
 * Terminates exactly these backends. The pids are chosen by an earlier query: putting
 * pg_terminate_backend in a WHERE clause lets the planner call it before the other filters.
 */
export async function terminate(backends: { pid: number }[]): Promise<void> {
  for (const { pid } of backends) await admin('SELECT pg_terminate_backend($1)', [pid]);
}
