/**
 * The replica guard (replication.ts) on a private primary and replica of its own: with
 * `waitReplicas`, a journal append, a group record and a dead letter resolve only once the replica
 * has them; without a replica to confirm, they fail retryable, and the retries write nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import type { Transport } from '@baton/core/adapter';
import { redisTransport } from './index.js';
import { layoutFor } from './layout.js';

let primary: PrivateServer;
let replica: PrivateServer;
let lonely: PrivateServer;

beforeAll(async () => {
  // One after the other: each takes a free port, and two at once could be handed the same one.
  primary = await startPrivateRedis();
  lonely = await startPrivateRedis();
  expect(lonely.port).not.toBe(primary.port);
  replica = await startPrivateRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
  // Until the first sync is done, WAIT counts no replica.
  const probe = new Redis(primary.url);
  try {
    for (let i = 0; ; i++) {
      await probe.set('probe', String(i));
      if (Number(await probe.call('WAIT', 1, 500)) >= 1) break;
      if (i > 40) throw new Error('the replica never confirmed a write');
    }
  } finally {
    probe.disconnect();
  }
}, 60_000);
afterAll(async () => {
  await Promise.allSettled([replica?.dispose(), primary?.dispose(), lonely?.dispose()]);
});

async function opened(url: string, waitTimeoutMs = 1_000): Promise<Transport> {
  const transport = redisTransport({ url, prefix: 'guarded', waitReplicas: 1, waitTimeoutMs });
  await transport.connect();
  return transport;
}

describe('redis transport replica guard', () => {
  it('resolves an append, a group record and a dead letter only once the replica has each', async () => {
    const transport = await opened(primary.url);
    const onReplica = new Redis(replica.url);
    const layout = layoutFor('guarded');
    try {
      const position = await transport.journal.append({
        runId: 'run-a',
        data: Buffer.from('step 1'),
        expectedLastPosition: 0,
      });
      // Read from the replica right away: nothing was given time to catch up after the append.
      expect(await onReplica.xlen(layout.journal('run-a'))).toBe(position);
      const record = await transport.groupLog!.appendGroupRecord('w1', Buffer.from('group'));
      expect(await onReplica.xlen(layout.groupLog('w1'))).toBe(record);
      await transport.deadLetters.add({
        data: Buffer.from('x'),
        headers: {},
        reason: 'poison',
        code: 'unparseable',
        at: 1,
      });
      expect(await onReplica.xlen(layout.deadLetters)).toBe(1);
    } finally {
      onReplica.disconnect();
      await transport.close();
    }
  });

  it('refuses, retryable, an append no replica confirms, and writes it once across its retries', async () => {
    const transport = await opened(lonely.url, 200);
    const direct = new Redis(lonely.url);
    try {
      await expect(
        transport.journal.append({ runId: 'run-b', data: Buffer.from('step 1') }),
      ).rejects.toMatchObject({
        code: 'BATON_REDIS_TRANSPORT_NOT_REPLICATED',
        retryable: true,
        message: expect.stringMatching(/only 0 of the required 1 replicas confirmed it within 200 ms/),
      });
      expect(await direct.xlen(layoutFor('guarded').journal('run-b'))).toBe(1);
      await expect(
        transport.deadLetters.add({ data: Buffer.from('x'), headers: {}, reason: 'r', code: 'c', at: 1 }),
      ).rejects.toMatchObject({
        code: 'BATON_REDIS_TRANSPORT_NOT_REPLICATED',
      });
    } finally {
      direct.disconnect();
      await transport.close();
    }
  });

  it('refuses a wait timeout that would not fit in the request timeout, naming both', () => {
    expect(() => redisTransport({ waitReplicas: 1, waitTimeoutMs: 5_000, requestTimeoutMs: 5_000 })).toThrow(
      /waitTimeoutMs \(5000\) must be below requestTimeoutMs \(5000\)/,
    );
  });
});
