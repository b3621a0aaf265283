/**
 * BullMQ's stalled-job check under Baton's leases, on the real Redis (transport and store): a
 * worker whose claim outlasts the message's ack wait (frozen at the fault point between "lease
 * acquired" and "message acked") sees its message delivered again to another worker, and that
 * worker does not become a second owner: the lease in the store refuses it. A second delivery,
 * never a second owner (libs/transport-redis/src/run-queue.ts, invariant 1).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Delivery, FetchOptions, Store, Transport } from '@baton/core/adapter';
import { purgeRedisKeyPrefix, redisStore } from '@baton/store-redis';
import { redisTestUrl } from '@baton/testing/servers';
import { deleteRedisTransportKeys, redisTransport } from '@baton/transport-redis';
import { Worker, type WorkerEvent } from './index.js';
import { withCapability } from './capabilities.spec-helper.js';
import { until } from './fleet.spec-helper.js';

const ACK_WAIT_MS = 500;
const keyPrefix = `bus-ownership-${randomUUID()}:`;
const busPrefix = `busown${randomUUID().slice(0, 8)}`;
const adapters: Array<Transport | Store> = [];
const workers: Worker[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await Promise.allSettled(adapters.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix });
  await deleteRedisTransportKeys({ url: redisTestUrl(), prefix: busPrefix });
});

/** A transport whose fetches are recorded, to see what reached the second worker. */
function recording(transport: Transport, seen: Delivery[]): Transport {
  return withCapability(transport, 'runQueue', {
    fetch: async (options: FetchOptions) => {
      const batch = await transport.runQueue.fetch(options);
      seen.push(...batch);
      return batch;
    },
  });
}

describe('redis bus: the stalled-job check under leases', () => {
  it('delivers a message again while its first receiver holds the lease, and the second receiver never runs the run', async () => {
    const executions: string[] = [];
    const step = defineActivity({
      name: 'ownership_step',
      run: async (x: number) => {
        executions.push(`step ${x}`);
        return x + 1;
      },
    });
    const wf = defineWorkflow({
      name: 'ownership',
      version: 1,
      run: async (ctx, x: number) => ctx.run(step, await ctx.run(step, x)),
    });
    const make = () => {
      const transport = redisTransport({
        url: redisTestUrl(),
        prefix: busPrefix,
        ackWaitMs: ACK_WAIT_MS,
        pollMs: 20,
      });
      const store = redisStore({ url: redisTestUrl(), keyPrefix });
      adapters.push(transport, store);
      return { transport, store };
    };

    // Worker A freezes once, for four ack waits, right after taking the lease and before the ack.
    const a = make();
    const claims: Array<{ worker: string; event: WorkerEvent }> = [];
    let frozen: (() => void) | undefined;
    const frozenAt = new Promise<void>((resolve) => (frozen = resolve));
    const workerA = new Worker({
      transport: a.transport,
      store: a.store,
      workflows: [wf],
      // One slot, held by the frozen claim: A fetches nothing meanwhile, so the redelivery goes to B.
      concurrency: 1,
      fetchWaitMs: 200,
      faults: async (point) => {
        if (point !== 'lease-acquired' || frozen === undefined) return;
        const done = frozen;
        frozen = undefined;
        done();
        await sleep(ACK_WAIT_MS * 4);
      },
      onEvent: (event) => {
        if (event.type === 'run-claimed') claims.push({ worker: 'A', event });
      },
    });
    workers.push(workerA);
    await workerA.start();

    const client = new Client({ transport: a.transport, store: a.store });
    const run = await client.start(wf, 1);
    await frozenAt;

    // Worker B starts while A holds the run's lease and has not acked its message.
    const b = make();
    const seenByB: Delivery[] = [];
    const workerB = new Worker({
      transport: recording(b.transport, seenByB),
      store: b.store,
      workflows: [wf],
      fetchWaitMs: 200,
      onEvent: (event) => {
        if (event.type === 'run-claimed') claims.push({ worker: 'B', event });
      },
    });
    workers.push(workerB);
    await workerB.start();

    // The stalled check gives the message to B while A is frozen...
    await until(() => seenByB.length > 0, ACK_WAIT_MS * 4, 'a redelivery to worker B');
    expect(seenByB[0]!.deliveryCount).toBeGreaterThanOrEqual(2);
    // ...and the run still completes once, on A alone.
    expect(await run.result({ timeoutMs: 15_000 })).toBe(3);
    expect(executions).toEqual(['step 1', 'step 2']);
    expect(claims.map((c) => c.worker)).toEqual(['A']);
  });
});
