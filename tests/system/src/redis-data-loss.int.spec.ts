/**
 * A Redis that restarts without persistence comes back empty: every run it held is gone. On a
 * private redis-server (never the shared one), with NATS as the bus and a real Worker holding ten
 * runs in flight:
 * - without persistence, the restart is reported once, as an error naming the ten runs and what to
 *   do, a `store-data-lost` event and the worker's health; and a client tells the truth about the
 *   lost runs (RunLostError, never a wait without end): a result() that saw the run running, a
 *   handle whose start was sent before the recorded loss, a second client that was not connected
 *   (describe() with the journal on the bus as the evidence);
 * - with the append-only file (appendonly yes, its own directory), the same restart loses nothing,
 *   raises no such error, and the ten runs complete.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { Worker, type Logger, type WorkerEvent } from '@baton/worker';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const RUNS = 10;

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An activity that holds its run in flight until the test lets go (or the run is aborted). */
function holdingWorkflow() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = defineActivity({
    name: 'hold',
    run: (n: number, io) =>
      new Promise<number>((resolve, reject) => {
        void released.then(() => resolve(n));
        io.signal.addEventListener('abort', () => reject(io.signal.reason), { once: true });
      }),
  });
  const workflow = defineWorkflow({
    name: 'data_loss_hold',
    version: 1,
    run: async (ctx, n: number) => {
      // A first step, so each run's journal on the bus holds a record before the loss.
      await ctx.activity('begin', async () => n);
      return ctx.run(hold, n);
    },
  });
  return { workflow, release: () => release() };
}

describe('a Redis store that restarts', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  }, 60_000);

  async function setUp(server: PrivateServer) {
    const ns = `dataloss${randomBytes(5).toString('hex')}`;
    const env = await crashEnvironment('redis', 'nats')(ns, { storeUrl: server.url });
    cleanup.push(
      () => env.dispose(),
      () => env.store.close(),
      () => env.transport.close(),
    );
    // unknownRunMs: how long a handle waits for a run that is unknown after a recorded loss.
    const client = new Client({ transport: env.transport, store: env.store, unknownRunMs: 1_000 });
    await client.connect();
    const { workflow, release } = holdingWorkflow();
    const events: WorkerEvent[] = [];
    const errors: Array<{ obj: object; msg?: string }> = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (obj, msg) => errors.push({ obj, msg }),
    };
    const worker = new Worker({
      transport: env.transport,
      store: env.store,
      workflows: [workflow],
      // Each run's journal on its own subject, so a client can find it there after the loss (group
      // records are found through the store's pointers, which go with the data).
      journal: 'per-run',
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      drainTimeoutMs: 2_000,
      logger,
      onEvent: (event) => events.push(event),
    });
    await worker.start();
    cleanup.push(() => worker.stop());
    const runs = await Promise.all(Array.from({ length: RUNS }, (_, n) => client.start(workflow, n)));
    await until(`the worker holds all ${RUNS} runs`, () => worker.ownedRuns.length === RUNS);
    return { worker, runs, release, events, errors, env, client };
  }

  it('without persistence: reports the loss once, naming every run the worker held', async () => {
    const server = await startPrivateRedis(['--appendonly', 'no']);
    cleanup.push(() => server.dispose());
    const { worker, runs, events, errors, env, client } = await setUp(server);

    // Waiting without a timeout while the loss happens: it saw the run running, then gone.
    const waiting = runs[0]!.result();
    waiting.catch(() => undefined);
    await until(
      'the first run is seen running',
      async () => (await client.describe(runs[0]!.runId)).status === 'running',
    );
    await server.restart();
    await until('the loss is reported', () => events.some((e) => e.type === 'store-data-lost'));
    await expect(waiting).rejects.toMatchObject({ name: 'RunLostError', code: 'BATON_NOT_FOUND' });
    await expect(waiting).rejects.toThrow(/was running when last read.*lost its data at .*idempotency key/s);
    // A handle whose start was sent before the loss the store recorded: no wait without end.
    await until(
      'the loss is recorded in the store',
      async () => (await env.store.lastDataLoss?.()) !== undefined,
    );
    await expect(runs[1]!.result()).rejects.toThrow(/start was sent at .*before the loss/);
    // A client that was never connected during the loss: the run's journal on the bus shows it ran.
    const later = new Client({ transport: env.transport, store: env.store });
    await expect(later.describe(runs[2]!.runId)).rejects.toMatchObject({ name: 'RunLostError' });
    await expect(later.describe(runs[2]!.runId)).rejects.toThrow(/journal on the bus holds \d+ record/);
    // A run that never existed stays plainly not found, naming the loss as a possibility.
    await expect(later.describe('never-started-run')).rejects.toThrow(
      /not known to the store.*lost its data at/s,
    );

    const lost = events.filter((e) => e.type === 'store-data-lost');
    expect(lost).toHaveLength(1);
    const runIds = runs.map((r) => r.runId).sort();
    expect(lost[0]).toMatchObject({ store: 'redis', runIds });
    expect(lost[0]?.type === 'store-data-lost' && lost[0].reason).toMatch(/marker key .* is gone.*run_id/);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.obj).toMatchObject({ lostRuns: RUNS, runIds });
    expect(errors[0]?.msg).toContain(`${RUNS} run(s) this worker held are gone`);
    expect(errors[0]?.msg).toContain('appendonly yes');
    expect(errors[0]?.msg).toContain('idempotency key');
    expect(worker.health().storeDataLoss).toMatchObject({ runIds });
  }, 60_000);

  it('with the append-only file: loses nothing, reports nothing, and every run completes', async () => {
    const server = await startPrivateRedis(); // appendonly yes, appendfsync always, its own dir
    cleanup.push(() => server.dispose());
    const { worker, runs, release, events, errors } = await setUp(server);

    await server.restart();
    release();
    const results = await Promise.all(runs.map((r) => r.result({ timeoutMs: 30_000 })));
    expect(results).toEqual(Array.from({ length: RUNS }, (_, n) => n));
    expect(events.filter((e) => e.type === 'store-data-lost')).toEqual([]);
    expect(errors).toEqual([]);
    expect(worker.health().storeDataLoss).toBeNull();
  }, 60_000);
});
