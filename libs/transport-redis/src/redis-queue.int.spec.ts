/**
 * What the Redis transport adds to the conformance suite, on the shared Redis: how BullMQ's stalled
 * check, locks and delayed set map onto ack wait, redelivery counts and nak (run-queue.ts), a
 * journal append whose reply was lost, jobs that did not come from Baton, and connect failures.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Delivery, Transport } from '@baton/core/adapter';
import { redisTestUrl } from '@baton/testing/servers';
import { FOREIGN_JOB_HEADER, redisTransport } from './index.js';
import { layoutFor } from './layout.js';
import { defineScripts } from './scripts.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const ACK_WAIT_MS = 500;
const prefixes = testPrefixes(redisTestUrl());
const open: Transport[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});
afterAll(() => prefixes.cleanUp());

async function connected(prefix = prefixes.next()): Promise<{ transport: Transport; prefix: string }> {
  const transport = redisTransport({ url: redisTestUrl(), prefix, ackWaitMs: ACK_WAIT_MS, pollMs: 20 });
  open.push(transport);
  await transport.connect();
  return { transport, prefix };
}

async function next(transport: Transport, withinMs = 5_000): Promise<Delivery> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 500 });
    if (delivery !== undefined) return delivery;
  }
  throw new Error(`no delivery within ${withinMs} ms`);
}

const text = (d: Delivery) => Buffer.from(d.data).toString();

async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(redisTestUrl(), { lazyConnect: true });
  await redis.connect();
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

describe('redis transport: BullMQ under Baton', () => {
  it('keeps redelivering a message that stalls again and again, counting up, and never fails the job', async () => {
    const { transport, prefix } = await connected();
    await transport.runQueue.enqueue(Buffer.from('crashes its consumer'));
    // BullMQ's default maxStalledCount (1) would fail the job at its second stall: Baton's own
    // maxDeliveries is the bound, so the job must come back every time.
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) counts.push((await next(transport, ACK_WAIT_MS * 4 + 2_000)).deliveryCount);
    expect(counts).toEqual([1, 2, 3, 4]);
    const queue = new Queue(layoutFor(prefix).queueName, { connection: { url: redisTestUrl() }, prefix });
    try {
      expect(await queue.getJobCounts('failed', 'completed')).toEqual({ failed: 0, completed: 0 });
    } finally {
      await queue.close();
    }
  });

  it('ignores an ack whose lock ran out: the redelivered copy stays to be settled by its receiver', async () => {
    const { transport } = await connected();
    await transport.runQueue.enqueue(Buffer.from('slow claim'));
    const first = await next(transport);
    const second = await next(transport, ACK_WAIT_MS * 4 + 2_000);
    expect(second.deliveryCount).toBe(2);
    await expect(first.ack()).resolves.toBeUndefined();
    // The late ack took nothing from the second delivery: it nakks, and the message comes again.
    await second.nak();
    const third = await next(transport);
    expect([text(third), third.deliveryCount]).toEqual(['slow claim', 3]);
    await third.ack();
    expect(await transport.runQueue.fetch({ max: 1, expiresMs: ACK_WAIT_MS * 3 })).toEqual([]);
  });

  it('leaves a message nakked with a delay to the delay, not to the stalled check', async () => {
    const { transport } = await connected();
    await transport.runQueue.enqueue(Buffer.from('later'));
    const first = await next(transport);
    // Longer than several ack waits: the stalled check runs meanwhile and must not move it.
    await first.nak(ACK_WAIT_MS * 4);
    expect(await transport.runQueue.fetch({ max: 1, expiresMs: ACK_WAIT_MS * 3 })).toEqual([]);
    const second = await next(transport, ACK_WAIT_MS * 4);
    expect([text(second), second.deliveryCount]).toEqual(['later', 2]);
    await second.ack();
  });

  it('counts delivered and delayed messages as ack-pending, waiting ones as pending', async () => {
    const { transport } = await connected();
    for (const label of ['a', 'b', 'c']) await transport.runQueue.enqueue(Buffer.from(label));
    const taken = await next(transport);
    const delayed = await next(transport);
    await delayed.nak(60_000);
    const detail = await transport.runQueue.backlogDetail!(2_000);
    expect(detail?.total).toBe(1);
    expect(detail?.parts).toEqual([{ name: expect.stringMatching(/:runs$/), pending: 1, ackPending: 2 }]);
    await taken.ack();
  });

  it("wakes a waiting fetch on BullMQ's marker when another producer adds a job, between its polls", async () => {
    const prefix = prefixes.next();
    // A poll period longer than the fetch: only the marker can bring the job in time.
    const consumer = redisTransport({ url: redisTestUrl(), prefix, ackWaitMs: 20_000, pollMs: 15_000 });
    const producer = redisTransport({ url: redisTestUrl(), prefix });
    open.push(consumer, producer);
    await Promise.all([consumer.connect(), producer.connect()]);
    // Ended by its signal, not by expiresMs: an expiring fetch asks once more, an aborted one does not.
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 4_000).unref();
    const fetching = consumer.runQueue.fetch({ max: 1, expiresMs: 10_000, signal: stop.signal });
    await sleep(300);
    await producer.runQueue.enqueue(Buffer.from('from elsewhere'));
    const batch = await fetching;
    expect(batch.map(text)).toEqual(['from elsewhere']);
    await batch[0]?.ack();
  });

  it('delivers a job that Baton did not write as its JSON, named in a header, for the dead letters', async () => {
    const { transport, prefix } = await connected();
    const queue = new Queue(layoutFor(prefix).queueName, { connection: { url: redisTestUrl() }, prefix });
    try {
      await queue.add('send-email', { to: 'a@example.com' });
    } finally {
      await queue.close();
    }
    const delivery = await next(transport);
    expect(JSON.parse(text(delivery))).toEqual({ to: 'a@example.com' });
    expect(delivery.headers[FOREIGN_JOB_HEADER]).toMatch(/^send-email#/);
    await delivery.ack();
  });
});

describe('redis transport: journal streams', () => {
  it('answers a retried append whose first reply was lost with the position it landed at, once', async () => {
    const prefix = prefixes.next();
    const key = layoutFor(prefix).journal('run-lost-reply');
    await withRedis(async (redis) => {
      const run = defineScripts(redis);
      expect(await run('journal-append', [key], ['a', '', 'token-a'])).toEqual(['ok', 1]);
      // The same call again, as a retry after a dropped connection sends it: no second record.
      expect(await run('journal-append', [key], ['b', 1, 'token-b'])).toEqual(['ok', 2]);
      expect(await run('journal-append', [key], ['b', 1, 'token-b'])).toEqual(['ok', 2]);
      expect(await run('journal-append', [key], ['a', '', 'token-a'])).toEqual(['ok', 3]);
      expect(await run('journal-append', [key], ['a', '', 'token-a'])).toEqual(['ok', 3]);
      // Another writer's append with the same stale expectation is still a conflict.
      expect(await run('journal-append', [key], ['zombie', 1, 'token-z'])).toEqual(['conflict', 3]);
      expect(await redis.xlen(key)).toBe(3);
    });
  });

  it('reads a tail longer than one page whole and in order', async () => {
    const { transport } = await connected();
    const appends = Array.from({ length: 2_050 }, (_, i) =>
      transport.journal.append({ runId: 'run-long', data: Buffer.from(`r${i + 1}`) }),
    );
    await Promise.all(appends);
    const records = await transport.journal.read('run-long', 10, 2_040);
    expect(records).toHaveLength(2_030);
    expect(records.map((r) => r.position)).toEqual(Array.from({ length: 2_030 }, (_, i) => i + 11));
    expect(Buffer.from(records.at(-1)!.data).toString()).toBe('r2040');
    expect(await transport.journal.read('run-long', 0)).toHaveLength(2_050);
  });

  it('deletes the run stream itself on purge', async () => {
    const { transport, prefix } = await connected();
    await transport.journal.append({ runId: 'run-purged', data: Buffer.from('x') });
    const key = layoutFor(prefix).journal('run-purged');
    expect(await withRedis((redis) => redis.exists(key))).toBe(1);
    await transport.journal.purge('run-purged');
    expect(await withRedis((redis) => redis.exists(key))).toBe(0);
  });
});

describe('redis transport: connect', () => {
  it('fails within connectTimeoutMs on a port nobody listens on, naming the server', async () => {
    const transport = redisTransport({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 1_000 });
    const started = Date.now();
    await expect(transport.connect()).rejects.toMatchObject({
      code: 'BATON_REDIS_TRANSPORT_UNAVAILABLE',
      message: expect.stringContaining('redis://127.0.0.1:1'),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    await transport.close();
  });

  it('refuses a wrong password at once, without showing it', async () => {
    const url = new URL(redisTestUrl());
    url.username = 'nobody';
    url.password = 'wrong-secret';
    const transport = redisTransport({ url: url.toString(), connectTimeoutMs: 3_000 });
    const failure = await transport.connect().then(
      () => undefined,
      (err: unknown) => err as Error & { code: string },
    );
    expect(failure?.code).toBe('BATON_REDIS_TRANSPORT_AUTH');
    expect(failure?.message).not.toContain('wrong-secret');
    await transport.close();
  });

  it('refuses every operation after close, naming it', async () => {
    const { transport } = await connected();
    await transport.close();
    await expect(transport.runQueue.enqueue(Buffer.from('x'))).rejects.toMatchObject({
      code: 'BATON_CLOSED',
    });
    await expect(transport.journal.append({ runId: 'r', data: Buffer.from('x') })).rejects.toMatchObject({
      code: 'BATON_CLOSED',
    });
  });
});
