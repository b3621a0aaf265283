import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@baton/testing/servers';
import { postgresStore } from './index.js';
import { TestSchemas, admin, uniqueName, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

/** The test URL with another user, password, database or port. */
function variant(change: { user?: string; password?: string; database?: string; port?: number }): string {
  const u = new URL(url);
  if (change.user !== undefined) u.username = change.user;
  if (change.password !== undefined) u.password = change.password;
  if (change.database !== undefined) u.pathname = `/${change.database}`;
  if (change.port !== undefined) u.port = String(change.port);
  return u.toString();
}

/** A TCP server that answers every PostgreSQL startup with the given ErrorResponse, or never answers. */
async function fakeServer(error?: {
  code: string;
  message: string;
}): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    if (error === undefined) return; // silent: accepts, never speaks
    socket.once('data', () => {
      const fields = Buffer.concat(
        [
          ['S', 'FATAL'],
          ['V', 'FATAL'],
          ['C', error.code],
          ['M', error.message],
        ].map(([type, value]) => Buffer.from(`${type}${value}\0`)),
      );
      const length = Buffer.alloc(4);
      length.writeInt32BE(4 + fields.length + 1);
      socket.end(Buffer.concat([Buffer.from('E'), length, fields, Buffer.from([0])]));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
}

async function connectError(store: ReturnType<typeof postgresStore>): Promise<Error & { code: string }> {
  try {
    await store.connect();
  } catch (err) {
    return err as Error & { code: string };
  } finally {
    await store.close();
  }
  throw new Error('connect() succeeded');
}

describe('postgres store: connecting', () => {
  it('rejects an unreachable server at once, naming host and port', async () => {
    const err = await connectError(postgresStore({ url: variant({ port: 1 }), schema: schemas.name() }));
    expect(err).toMatchObject({ name: 'PostgresStoreError', code: 'BATON_PG_UNREACHABLE', retryable: true });
    expect(err.message).toContain('127.0.0.1:1');
    expect(err.cause).toBeDefined();
  });

  it('gives up on a server that never answers after connectTimeoutMs, naming it', async () => {
    const { port, server } = await fakeServer();
    try {
      const store = postgresStore({ url: variant({ port }), schema: schemas.name(), connectTimeoutMs: 300 });
      const err = await connectError(store);
      expect(err).toMatchObject({ code: 'BATON_PG_UNREACHABLE' });
      expect(err.message).toContain(`no answer from 127.0.0.1:${port} within 300 ms`);
    } finally {
      server.close();
    }
  });

  it('names an unknown database and how to fix it', async () => {
    const database = uniqueName('nodb');
    const err = await connectError(postgresStore({ url: variant({ database }), schema: schemas.name() }));
    expect(err).toMatchObject({ code: 'BATON_PG_UNKNOWN_DATABASE' });
    expect(err.message).toContain(`database "${database}" does not exist`);
    expect(err.message).toContain(`CREATE DATABASE "${database}"`);
  });

  it('names an unknown role and how to fix it', async () => {
    const user = uniqueName('nobody');
    const err = await connectError(postgresStore({ url: variant({ user }), schema: schemas.name() }));
    expect(err).toMatchObject({ code: 'BATON_PG_UNKNOWN_ROLE' });
    expect(err.message).toContain(`role "${user}" does not exist`);
    expect(err.message).toContain('CREATE ROLE');
  });

  it('reports refused credentials without ever showing the password', async () => {
    const { port, server } = await fakeServer({
      code: '28P01',
      message: 'password authentication failed for user "app"',
    });
    try {
      const store = postgresStore({
        url: `postgres://app:hunter2@127.0.0.1:${port}/test`,
        schema: schemas.name(),
      });
      const err = await connectError(store);
      expect(err).toMatchObject({ code: 'BATON_PG_AUTH_FAILED' });
      expect(err.message).toContain('password authentication failed');
      expect(err.message).toContain('postgres://app:***@');
      expect(err.message).not.toContain('hunter2');
    } finally {
      server.close();
    }
  });

  it('says when the server does not speak TLS the URL asks for', async () => {
    const err = await connectError(postgresStore({ url, ssl: true, schema: schemas.name() }));
    expect(err).toMatchObject({ code: 'BATON_PG_TLS' });
    expect(err.message).toContain('does not support SSL');
  });

  describe('with a role of its own', () => {
    const role = uniqueName('baton_role');
    afterAll(async () => {
      await admin(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin(`DROP ROLE IF EXISTS ${role}`);
    });

    it('names the schema and the GRANT a role without CREATE privilege needs', async () => {
      await admin(`CREATE ROLE ${role} LOGIN`);
      const schema = schemas.name();
      const err = await connectError(postgresStore({ url: variant({ user: role }), schema }));
      expect(err).toMatchObject({ code: 'BATON_PG_PRIVILEGES' });
      expect(err.message).toContain(`schema "${schema}"`);
      expect(err.message).toContain(`GRANT CREATE ON DATABASE "test" TO "${role}"`);
      expect(err.message).toContain(`CREATE SCHEMA "${schema}" AUTHORIZATION "${role}"`);
    });

    it('works with usage grants alone on a schema an administrator migrated', async () => {
      const schema = schemas.name();
      const owner = postgresStore({ url, schema, poolSize: 2 });
      await owner.connect();
      await owner.close();
      await admin(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await admin(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      await admin(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema}" TO ${role}`);
      const store = postgresStore({ url: variant({ user: role }), schema, poolSize: 2 });
      try {
        await store.connect();
        const { run } = await store.runs.create({
          runId: 'r1',
          workflow: 'w',
          version: 1,
          input: null,
          idempotencyKey: null,
        });
        expect(await store.leases.acquire(run.runId, 'worker-a', 5_000)).toMatchObject({
          ok: true,
          epoch: 1,
        });
        await store.presence.register('worker-a');
        expect(await store.presence.live()).toEqual(['worker-a']);
      } finally {
        await store.close();
      }
    });
  });
});
