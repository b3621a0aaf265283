/**
 * The run queue's batch take and batch ack (bull-batch.ts, run-batches.ts) on the shared Redis:
 * each job goes to one fetcher once, among transports and a plain BullMQ consumer fetching at the
 * same time; delivery counts; acked jobs leave nothing; a nakked job comes back; an ack whose lock
 * ran out, sent in one batch with others, changes nothing for its job; jobs other BullMQ
 * producers add (prioritized, delayed) are taken too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Delivery, Transport } from '@baton/core/adapter';
import { redisTestUrl } from '@baton/testing/servers';
import { redisTransport } from './index.js';
import { layoutFor } from './layout.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const ACK_WAIT_MS = 500;
const prefixes = testPrefixes(redisTestUrl());
const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});
afterAll(() => prefixes.cleanUp());

function transportOn(prefix: string, ackWaitMs = ACK_WAIT_MS): Transport {
  const transport = redisTransport({ url: redisTestUrl(), prefix, ackWaitMs, pollMs: 20 });
  open.push(transport);
  return transport;
}

function queueOn(prefix: string): Queue {
  const queue = new Queue(layoutFor(prefix).queueName, { connection: { url: redisTestUrl() }, prefix });
  open.push(queue);
  return queue;
}

const text = (d: Delivery) => Buffer.from(d.data).toString();

/** Fetches until `count` deliveries came, or fails after `withinMs`. */
async function take(transport: Transport, count: number, withinMs = 5_000): Promise<Delivery[]> {
  const deadline = Date.now() + withinMs;
  const taken: Delivery[] = [];
  while (taken.length < count && Date.now() < deadline) {
    taken.push(...(await transport.runQueue.fetch({ max: count - taken.length, expiresMs: 300 })));
  }
  if (taken.length < count) throw new Error(`${taken.length} of ${count} deliveries within ${withinMs} ms`);
  return taken;
}

/** The job hashes (and their locks) left under the queue: BullMQ's job ids are numbers. */
async function jobKeysLeft(prefix: string): Promise<string[]> {
  const redis = new Redis(redisTestUrl(), { lazyConnect: true });
  await redis.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:runs:[0-9]*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

describe('redis transport: batch take and batch ack', () => {
  it('gives each job to one fetcher once while transports and a BullMQ consumer fetch at once; acked jobs leave nothing', async () => {
    const prefix = prefixes.next();
    const fetchers = [transportOn(prefix, 20_000), transportOn(prefix, 20_000), transportOn(prefix, 20_000)];
    await Promise.all(fetchers.map((t) => t.connect()));
    const jobs = 400;
    await Promise.all(
      Array.from({ length: jobs }, (_, i) => fetchers[0]!.runQueue.enqueue(Buffer.from(`m${i}`))),
    );
    // A consumer of the old code's kind: BullMQ's getNextJob, one job per call (a fleet mid-rollout).
    const old = new Worker(layoutFor(prefix).queueName, null, {
      connection: { url: redisTestUrl() },
      prefix,
      autorun: false,
      lockDuration: 20_000,
    });
    open.push(old);
    const oldTaken: Array<{ job: Job; token: string }> = [];
    const delivered: Delivery[] = [];
    let left = jobs;
    const fetchLoop = async (transport: Transport) => {
      while (left > 0) {
        const batch = await transport.runQueue.fetch({ max: 64, expiresMs: 100 });
        left -= batch.length;
        delivered.push(...batch);
      }
    };
    const oldLoop = async () => {
      for (let i = 0; left > 0; i++) {
        const token = `old-${i}`;
        const job = (await old.getNextJob(token, { block: false })) as Job | undefined;
        if (job === undefined) await sleep(10);
        else {
          left--;
          oldTaken.push({ job, token });
        }
      }
    };
    // The old consumer's first jobs before the rest race for the others: it takes part for sure.
    for (let i = 0; i < 10; i++) {
      const token = `old-first-${i}`;
      oldTaken.push({ job: (await old.getNextJob(token, { block: false })) as Job, token });
      left--;
    }
    await Promise.all([...fetchers.map(fetchLoop), oldLoop()]);

    const received = [
      ...delivered.map(text),
      ...oldTaken.map(({ job }) => Buffer.from(job.data.d, 'base64').toString()),
    ];
    expect(received).toHaveLength(jobs);
    expect(new Set(received).size).toBe(jobs);
    expect(delivered.every((d) => d.deliveryCount === 1)).toBe(true);
    expect(delivered.length).toBeGreaterThan(0);
    expect(oldTaken.length).toBeGreaterThanOrEqual(10);

    // Every ack in one turn: the transports send them in batches.
    await Promise.all([
      ...delivered.map((d) => d.ack()),
      ...oldTaken.map(({ job, token }) => job.moveToCompleted(null, token, false)),
    ]);
    const queue = queueOn(prefix);
    expect(
      await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed', 'completed', 'failed'),
    ).toEqual({
      wait: 0,
      active: 0,
      prioritized: 0,
      delayed: 0,
      completed: 0,
      failed: 0,
    });
    expect(await jobKeysLeft(prefix)).toEqual([]);
    expect(await fetchers[1]!.runQueue.fetch({ max: 64, expiresMs: 200 })).toEqual([]);
  });

  it('counts deliveries and brings a nakked job back, counted again', async () => {
    const prefix = prefixes.next();
    const transport = transportOn(prefix);
    await transport.connect();
    for (const label of ['a', 'b', 'c']) await transport.runQueue.enqueue(Buffer.from(label));
    const first = await take(transport, 3);
    expect(first.map((d) => [text(d), d.deliveryCount])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    await Promise.all([first[0]!.nak(), first[1]!.ack(), first[2]!.ack()]);
    const again = await take(transport, 1);
    expect(again.map((d) => [text(d), d.deliveryCount])).toEqual([['a', 2]]);
    await again[0]!.ack();
    expect(await transport.runQueue.fetch({ max: 10, expiresMs: ACK_WAIT_MS * 3 })).toEqual([]);
    expect(await jobKeysLeft(prefix)).toEqual([]);
  });

  it('changes nothing for a job whose lock ran out when its ack goes in one batch with live ones', async () => {
    const prefix = prefixes.next();
    const [stale, receiver] = [transportOn(prefix), transportOn(prefix)];
    await Promise.all([stale.connect(), receiver.connect()]);
    await stale.runQueue.enqueue(Buffer.from('slow'));
    const [late] = await take(stale, 1);
    // The lock runs out; the stalled check sends the job to the receiver.
    const [redelivered] = await take(receiver, 1, ACK_WAIT_MS * 6 + 2_000);
    expect([text(redelivered!), redelivered!.deliveryCount]).toEqual(['slow', 2]);
    await stale.runQueue.enqueue(Buffer.from('fresh'));
    const [fresh] = await take(stale, 1);
    // Both acks in one turn of the stale transport: one batch, one lost lock in it.
    await Promise.all([late!.ack(), fresh!.ack()]);
    const queue = queueOn(prefix);
    expect(await queue.getJobCounts('wait', 'active', 'completed', 'failed')).toEqual({
      wait: 0,
      active: 1,
      completed: 0,
      failed: 0,
    });
    // The receiver still holds its delivery: its nak brings the job back, counted again.
    await redelivered!.nak();
    const [third] = await take(receiver, 1);
    expect([text(third!), third!.deliveryCount]).toEqual(['slow', 3]);
    await third!.ack();
    expect(await jobKeysLeft(prefix)).toEqual([]);
  });

  it('takes what other BullMQ producers add: prioritized jobs, and delayed ones once due', async () => {
    const prefix = prefixes.next();
    const transport = transportOn(prefix);
    await transport.connect();
    const queue = queueOn(prefix);
    await transport.runQueue.enqueue(Buffer.from('baton'));
    await queue.add('urgent', { n: 1 }, { priority: 1 });
    await queue.add('later', { n: 2 }, { delay: 300 });
    const taken = await take(transport, 3);
    const names = taken.map((d) => (d.headers['baton-bullmq-job'] ?? text(d)).replace(/#.*/, ''));
    expect(names.sort()).toEqual(['baton', 'later', 'urgent']);
    expect(taken.every((d) => d.deliveryCount === 1)).toBe(true);
    await Promise.all(taken.map((d) => d.ack()));
    expect(await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed', 'completed')).toEqual({
      wait: 0,
      active: 0,
      prioritized: 0,
      delayed: 0,
      completed: 0,
    });
  });
});
