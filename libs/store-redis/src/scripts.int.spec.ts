/**
 * How the store's scripts reach the server, on a private redis-server (its script cache and
 * command statistics are its own, and SCRIPT FLUSH touches nobody else): a script's first call on
 * a connection goes as EVAL, later calls as EVALSHA, and a server whose script cache was emptied
 * gets the script again without the caller noticing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Store } from '@baton/core/adapter';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { loadScripts } from './scripts.js';

/** Successful calls of EVAL and EVALSHA so far, from INFO commandstats. */
async function scriptCalls(admin: Redis): Promise<{ eval: number; evalsha: number }> {
  const info = await admin.info('commandstats');
  const calls = (command: string): number =>
    Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { eval: calls('eval'), evalsha: calls('evalsha') };
}

const createRunSha = (): string => {
  const script = loadScripts().get('create-run');
  if (script === undefined) throw new Error('no create-run script');
  return script.sha;
};

describe('redis store: scripts through defineCommand', () => {
  let server: PrivateServer;
  let admin: Redis;
  let store: Store;
  const create = (runId: string) =>
    store.runs.create({ runId, workflow: 'w', version: 1, input: {}, idempotencyKey: null });

  beforeAll(async () => {
    server = await startPrivateRedis();
    admin = new Redis(server.url);
    store = redisStore({ url: server.url, keyPrefix: 'scripts:' });
    await store.connect();
  });
  afterAll(async () => {
    await store?.close();
    admin?.disconnect();
    await server?.dispose();
  });

  it('sends a script as EVAL on its first call and as EVALSHA afterwards', async () => {
    const before = await scriptCalls(admin);
    await create('run-1');
    const afterFirst = await scriptCalls(admin);
    expect(afterFirst.eval - before.eval).toBe(1);
    expect(afterFirst.evalsha - before.evalsha).toBe(0);

    await create('run-2');
    const afterSecond = await scriptCalls(admin);
    expect(afterSecond.eval - afterFirst.eval).toBe(0);
    expect(afterSecond.evalsha - afterFirst.evalsha).toBe(1);
    expect(await admin.script('EXISTS', createRunSha())).toEqual([1]);
  });

  it('sends a script again when the server lost its script cache', async () => {
    await create('run-3');
    await admin.script('FLUSH');
    expect(await admin.script('EXISTS', createRunSha())).toEqual([0]);

    const before = await scriptCalls(admin);
    await create('run-4');
    const after = await scriptCalls(admin);
    // The EVALSHA was refused with NOSCRIPT (not counted as a call), then EVAL ran it.
    expect(after.eval - before.eval).toBe(1);
    expect(await admin.script('EXISTS', createRunSha())).toEqual([1]);
    expect(await store.runs.get('run-4')).toMatchObject({ runId: 'run-4', status: 'pending' });

    await create('run-5');
    expect((await scriptCalls(admin)).evalsha - after.evalsha).toBe(1);
  });
});
