/**
 * The transport through Redis Sentinel, on a primary, a replica and three sentinels of this file's
 * own (real processes, infra/clusters/redis): with the replica guard at its default (1 behind
 * Sentinel), a journal append is refused while the replica cannot confirm it, and across a
 * SIGKILL of the primary every confirmed record is on the promoted replica, positions go on
 * without a gap, and the run queue follows the new primary.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery, Transport } from '@baton/core/adapter';
import {
  endThroughSentinelRace,
  pingWithin,
  startRedisCluster,
  type RedisCluster,
  type RedisClusterPorts,
} from '@baton/testing/clusters';
import { redisTransport } from './index.js';
import { openBullConnection, openCommandConnection } from './connection.js';
import { resolveRedisTransportOptions } from './options.js';

/** Apart from the store's and the worker's cluster specs, and from start.sh's defaults. */
const PORTS: RedisClusterPorts = { data: [16386, 16387], sentinels: [26389, 26390, 26391] };

let cluster: RedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster({ ports: PORTS });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

function transportOn(url: string, waitTimeoutMs = 1_000): Transport {
  return redisTransport({ url, prefix: `s${randomUUID().slice(0, 8)}`, ackWaitMs: 2_000, waitTimeoutMs });
}

/** Retries `work` while it fails retryable (Redis between primaries), up to `withinMs`. */
async function whenServed<T>(work: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (!(err as { retryable?: boolean }).retryable || Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

describe('redis transport behind Sentinel', () => {
  it('refuses an append its replica did not confirm, and appends once the replica answers', async () => {
    const c = cluster!;
    const transport = transportOn(c.url, 300);
    await transport.connect();
    try {
      const replica = (await c.primaryNode()) === 1 ? 2 : 1;
      await c.signal(replica, 'SIGSTOP');
      let refused: unknown;
      try {
        refused = await transport.journal
          .append({ runId: 'run-a', data: Buffer.from('x') })
          .catch((err: unknown) => err);
      } finally {
        await c.signal(replica, 'SIGCONT');
      }
      expect(refused).toMatchObject({ code: 'BATON_REDIS_TRANSPORT_NOT_REPLICATED', retryable: true });
      // The refused record was written once (its retries recognised it), and the next goes after it.
      expect(
        await whenServed(
          () => transport.journal.append({ runId: 'run-a', data: Buffer.from('y'), expectedLastPosition: 1 }),
          10_000,
        ),
      ).toBe(2);
    } finally {
      await transport.close();
    }
  });

  // A promotion takes Sentinel's down-after plus an election: seconds alone, more beside other suites.
  it(
    'keeps every confirmed record across a SIGKILL of the primary, and follows the promoted replica',
    { timeout: 60_000 },
    async () => {
      const c = cluster!;
      const transport = transportOn(c.url);
      await transport.connect();
      const before = await c.primaryNode();
      try {
        let last = 0;
        for (let i = 1; i <= 20; i++) {
          last = await transport.journal.append({
            runId: 'run-b',
            data: Buffer.from(`r${i}`),
            expectedLastPosition: last,
          });
        }
        await c.kill(before);
        const after = await c.waitForFailover(before, 60_000);
        expect(after).not.toBe(before);
        // Back as the new primary's replica: until then no write can be confirmed (the guard).
        await c.start(before);
        // The next append expects position 20: every confirmed record is on the new primary.
        const next = await whenServed(
          () =>
            transport.journal.append({ runId: 'run-b', data: Buffer.from('r21'), expectedLastPosition: 20 }),
          30_000,
        );
        expect(next).toBe(21);
        const records = await transport.journal.read('run-b', 0);
        expect(records.map((r) => Buffer.from(r.data).toString())).toEqual(
          Array.from({ length: 21 }, (_, i) => `r${i + 1}`),
        );
        // The BullMQ queue moved with it: a message enqueued now is delivered.
        await whenServed(() => transport.runQueue.enqueue(Buffer.from('after failover')), 30_000);
        let delivered: Delivery[] = [];
        const deadline = Date.now() + 15_000;
        while (delivered.length === 0 && Date.now() < deadline) {
          delivered = await transport.runQueue.fetch({ max: 1, expiresMs: 1_000 }).catch(() => []);
        }
        expect(delivered.map((d) => Buffer.from(d.data).toString())).toEqual(['after failover']);
        await delivered[0]!.ack();
      } finally {
        await transport.close();
      }
    },
  );

  it('connects the command connection again when a failover announcement ends it mid-reconnect, and not once closed', async () => {
    const connection = await openCommandConnection(resolveRedisTransportOptions({ url: cluster!.url }));
    let closed = false;
    try {
      await endThroughSentinelRace(connection.redis);
      await expect(connection.redis.ping()).rejects.toThrow('Connection is closed');
      expect(await pingWithin(connection.redis, 10_000)).toBe('PONG');
      await connection.close(1_000);
      closed = true;
      await sleep(500);
      expect(connection.redis.status).toBe('end');
    } finally {
      if (!closed) await connection.close(1_000);
    }
  });

  it('connects a BullMQ connection again when a failover announcement ends it mid-reconnect, and not once released', async () => {
    let held = true;
    const redis = openBullConnection(resolveRedisTransportOptions({ url: cluster!.url }), () => held);
    try {
      expect(await pingWithin(redis, 10_000)).toBe('PONG');
      await endThroughSentinelRace(redis);
      await expect(redis.ping()).rejects.toThrow('Connection is closed');
      // Before the revival, the run queue's enqueues failed like this ping, for good.
      expect(await pingWithin(redis, 10_000)).toBe('PONG');
      held = false;
      redis.disconnect();
      await sleep(500);
      expect(redis.status).toBe('end');
    } finally {
      held = false;
      redis.disconnect();
    }
  });
});
