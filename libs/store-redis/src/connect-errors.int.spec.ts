/**
 * connect() and operations fail with errors that name the server, the cause and the fix: an
 * unreachable port, a server that never answers, wrong credentials, a missing ACL permission.
 * Credentials and ACL users live on a private redis-server; the shared one is never changed.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Store } from '@baton/core/adapter';
import { freePort, redisTestUrl, startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const PASSWORD = 'secret-pw-7291';

async function connectError(store: Store): Promise<Error & { code?: string; command?: string }> {
  try {
    await store.connect();
  } catch (err) {
    await store.close();
    return err as Error;
  } finally {
    await store.close();
  }
  throw new Error('connect() succeeded');
}

describe('redis store: unreachable servers', () => {
  it('rejects connect() for a port nobody listens on, naming the URL and the cause', async () => {
    const port = await freePort();
    const store = redisStore({ url: `redis://app:${PASSWORD}@127.0.0.1:${port}`, connectTimeoutMs: 1_000 });
    const err = await connectError(store);
    expect(err).toMatchObject({ name: 'RedisUnavailableError', code: 'BATON_REDIS_UNAVAILABLE' });
    expect(err.message).toContain(`cannot reach Redis at redis://app:***@127.0.0.1:${port} within 1000 ms`);
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.message).not.toContain(PASSWORD);
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('gives up on a server that accepts connections but never answers', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const err = await connectError(redisStore({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 500 }));
      expect(err).toMatchObject({ code: 'BATON_REDIS_UNAVAILABLE' });
      expect(err.message).toContain(`cannot reach Redis at redis://127.0.0.1:${port} within 500 ms`);
    } finally {
      silent.close();
    }
  });

  it('lets a failed connect() be retried, and fails operations the same way', async () => {
    const port = await freePort();
    const store = redisStore({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 300 });
    await expect(store.connect()).rejects.toMatchObject({ code: 'BATON_REDIS_UNAVAILABLE' });
    await expect(store.runs.get('r')).rejects.toMatchObject({ code: 'BATON_REDIS_UNAVAILABLE' });
    await store.close();
  });

  it('cuts a connect under way short on close(), and fails it and its operations with BATON_CLOSED', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const store = redisStore({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 10_000 });
      const started = Date.now();
      const connecting = store.connect().catch((err: unknown) => err);
      const reading = store.runs.get('r').catch((err: unknown) => err);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await store.close();
      expect(await connecting).toMatchObject({
        code: 'BATON_CLOSED',
        message: 'redis store: connect called after close(); create a new store',
      });
      expect(await reading).toMatchObject({
        code: 'BATON_CLOSED',
        message: 'redis store: runs.get called after close(); create a new store',
      });
      // Well before connectTimeoutMs: close() did not wait for the silent server.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.close();
    }
  });
});

describe('redis store: credentials and permissions', () => {
  let server: PrivateServer;
  let admin: Redis;
  const url = (userinfo: string): string => `redis://${userinfo}@127.0.0.1:${server.port}`;

  beforeAll(async () => {
    server = await startPrivateRedis(['--requirepass', PASSWORD]);
    admin = new Redis(server.port, '127.0.0.1', { password: PASSWORD });
    // Everything but scripts; everything but CLIENT.
    await admin.acl('SETUSER', 'noscripts', 'on', '>pw', '~*', '+@all', '-eval', '-evalsha');
    await admin.acl('SETUSER', 'noclient', 'on', '>pw', '~*', '+@all', '-client');
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });

  it('names a wrong password as the cause, without showing it', async () => {
    const err = await connectError(redisStore({ url: url(':not-the-password') }));
    expect(err).toMatchObject({ name: 'RedisAuthError', code: 'BATON_REDIS_AUTH' });
    expect(err.message).toContain(`cannot log in to Redis at redis://:***@127.0.0.1:${server.port}`);
    expect(err.message).toContain('WRONGPASS');
    expect(err.message).not.toContain('not-the-password');
  });

  it('names a missing password as the cause', async () => {
    const err = await connectError(redisStore({ url: `redis://127.0.0.1:${server.port}` }));
    expect(err).toMatchObject({ code: 'BATON_REDIS_AUTH' });
    expect(err.message).toContain('NOAUTH');
  });

  it('connects with the password option overriding the URL', async () => {
    const store = redisStore({ url: url(':wrong'), password: PASSWORD, keyPrefix: 'creds:' });
    await store.connect();
    expect(await store.leases.now()).toBeGreaterThan(0);
    await store.close();
  });

  it('names the command an ACL user may not run when it lacks scripting', async () => {
    const err = await connectError(redisStore({ url: url('noscripts:pw') }));
    expect(err).toMatchObject({
      name: 'RedisPermissionError',
      code: 'BATON_REDIS_PERMISSION',
      resource: 'evalsha',
    });
    expect(err.message).toContain('+evalsha');
  });

  it('names CLIENT as the missing permission for presence', async () => {
    const store = redisStore({ url: url('noclient:pw'), keyPrefix: 'noclient:' });
    await store.connect();
    await expect(store.presence.live()).rejects.toMatchObject({
      code: 'BATON_REDIS_PERMISSION',
      resource: 'client|list',
      message: expect.stringContaining("grant the store's ACL user +client|list"),
    });
    await expect(store.presence.register('w1')).rejects.toMatchObject({ code: 'BATON_REDIS_PERMISSION' });
    expect(await admin.hgetall('noclient:workers')).toEqual({});
    await store.close();
  });
});

describe('redis store: lifecycle and isolation', () => {
  const prefixes = testPrefixes(redisTestUrl());
  afterAll(() => prefixes.cleanUp());

  it('rejects every operation after close() with BATON_CLOSED, and connect() too', async () => {
    const store = redisStore({ url: redisTestUrl(), keyPrefix: prefixes.next() });
    await store.connect();
    await store.close();
    const closed = { name: 'BatonError', code: 'BATON_CLOSED' };
    await expect(store.leases.acquire('r', 'w', 1_000)).rejects.toMatchObject(closed);
    await expect(store.leases.now()).rejects.toMatchObject(closed);
    await expect(store.presence.register('w')).rejects.toMatchObject(closed);
    await expect(store.connect()).rejects.toMatchObject(closed);
    await store.close();
  });

  it('connects on the first operation when connect() was not called', async () => {
    const store = redisStore({ url: redisTestUrl(), keyPrefix: prefixes.next() });
    expect(await store.leases.acquire('r', 'w', 1_000)).toMatchObject({ ok: true, epoch: 1 });
    await store.close();
  });

  it('keeps stores with different key prefixes apart', async () => {
    const a = redisStore({ url: redisTestUrl(), keyPrefix: prefixes.next() });
    const b = redisStore({ url: redisTestUrl(), keyPrefix: prefixes.next() });
    await Promise.all([a.connect(), b.connect()]);
    try {
      const run = { runId: 'same-id', workflow: 'w', version: 1, input: 'a', idempotencyKey: 'same-key' };
      expect((await a.runs.create(run)).created).toBe(true);
      expect((await b.runs.create({ ...run, input: 'b' })).created).toBe(true);
      expect((await b.runs.get('same-id'))?.input).toBe('b');
      expect(await a.leases.acquire('same-id', 'worker-a', 30_000)).toMatchObject({ ok: true, epoch: 1 });
      expect(await b.leases.get('same-id')).toBeUndefined();
      await a.presence.register('worker-a');
      expect(await b.presence.live()).toEqual([]);
      expect(await a.presence.live()).toEqual(['worker-a']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
