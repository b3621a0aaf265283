/**
 * A mixed fleet on real NATS JetStream and Redis: worker A registers only v1 of a workflow,
 * worker B only v2. A v1 run that reaches B is put back, never failed or dead-lettered, and
 * completes on a v1 worker. Unique stream and key prefixes keep this test's data to itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { redisStore, purgeRedisKeyPrefix } from '@baton/store-redis';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { deleteNatsStreams, natsTransport } from '@baton/transport-nats';
import { Worker, type Logger, type WorkerEvent, type WorkerOptions } from '@baton/worker';

const PREFIX = `ver${process.pid}x${Date.now().toString(36)}`;
const KEY_PREFIX = `${PREFIX}:`;

const v1 = defineWorkflow({
  name: 'versioned_order',
  version: 1,
  run: async (ctx) => `v1:${await ctx.waitForSignal<string>('go')}`,
});
const v2 = defineWorkflow({ name: 'versioned_order', version: 2, run: async () => 'v2' });

interface Member {
  worker: Worker;
  events: WorkerEvent[];
  warnings: string[];
  transport: Transport;
  store: Store;
}

const members: Member[] = [];
const adapters = (): { transport: Transport; store: Store } => ({
  transport: natsTransport({ servers: natsTestUrl(), prefix: PREFIX }),
  store: redisStore({ url: redisTestUrl(), keyPrefix: KEY_PREFIX }),
});

async function member(workflows: WorkerOptions['workflows'], id: string): Promise<Member> {
  const { transport, store } = adapters();
  const events: WorkerEvent[] = [];
  const warnings: string[] = [];
  const noop = (): void => undefined;
  const logger: Logger = {
    debug: noop,
    info: noop,
    error: noop,
    warn: (_o, msg) => warnings.push(msg ?? ''),
  };
  const worker = new Worker({
    transport,
    store,
    workflows,
    workerId: `${PREFIX}-${id}`,
    leaseMs: 2_000,
    fetchWaitMs: 200,
    inProcessWaitMs: 0,
    maxDeliveries: 2,
    logger,
    onEvent: (e) => events.push(e),
  });
  await worker.start();
  const m = { worker, events, warnings, transport, store };
  members.push(m);
  return m;
}

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('workflow versions in a mixed fleet (real NATS JetStream + Redis)', () => {
  let client: Client;
  let clientAdapters: { transport: Transport; store: Store };

  beforeAll(async () => {
    clientAdapters = adapters();
    client = new Client(clientAdapters);
    await client.connect();
  });

  afterAll(async () => {
    for (const m of members) {
      await m.worker.stop().catch(() => undefined);
      await Promise.allSettled([m.transport.close(), m.store.close()]);
    }
    await Promise.allSettled([clientAdapters?.transport.close(), clientAdapters?.store.close()]);
    await deleteNatsStreams({ servers: natsTestUrl(), prefix: PREFIX });
    await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix: KEY_PREFIX });
  }, 30_000);

  it(
    'puts a v1 run that reached the v2-only worker back, and it completes on a v1 worker with no failure and no dead letter',
    { timeout: 60_000 },
    async () => {
      // The v1 run starts on A and suspends; A leaves (the old pods of a rolling deploy).
      const a = await member([v1], 'a');
      const run = await client.start(v1, null);
      await until(() => a.events.some((e) => e.type === 'run-suspended'), 15_000, 'the v1 run to suspend');
      await a.worker.stop();

      // Only B (v2) is left when the run wakes: it must put it back, past maxDeliveries (2).
      const b = await member([v2], 'b');
      await client.signal(run.runId, 'go', 'ok');
      await until(() => b.warnings.some((w) => w.includes('versioned_order@1')), 15_000, 'a put-back');
      await new Promise((r) => setTimeout(r, 2_000)); // put-backs after 200, 400, 800 ms, ...
      expect((await client.describe(run.runId)).status).not.toBe('failed');
      expect(await clientAdapters.transport.deadLetters.list()).toEqual([]);
      const warning = b.warnings.find((w) => w.includes('versioned_order@1'))!;
      expect(warning).toContain(`run ${run.runId} needs workflow versioned_order@1`);
      expect(warning).toContain('it has: versioned_order@2');
      expect(b.warnings.filter((w) => w.includes('versioned_order@1'))).toHaveLength(1);

      // B keeps serving v2 meanwhile; a v1 worker joins and completes the v1 run.
      const v2run = await client.start(v2, null);
      expect(await v2run.result({ timeoutMs: 15_000 })).toBe('v2');
      const a2 = await member([v1], 'a2');
      expect(await run.result({ timeoutMs: 30_000 })).toBe('v1:ok');
      expect(a2.events.some((e) => e.type === 'run-completed' && e.runId === run.runId)).toBe(true);
      expect(b.events.filter((e) => e.type === 'run-failed' || e.type === 'dead-lettered')).toEqual([]);
      expect(await clientAdapters.transport.deadLetters.list()).toEqual([]);
    },
  );
});
