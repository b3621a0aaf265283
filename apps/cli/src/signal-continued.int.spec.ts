/**
 * `baton runs signal` to a run that continued as new (docs/continue-as-new.md), run in process on
 * NATS + Redis with a real Worker: the first run's id is accepted (the signal goes on to its
 * successor, which takes it and ends with it), where a run that finished without continuing is
 * still refused (nothing is sent).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineWorkflow } from '@baton/core';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
// The code of the adapters operatorAdapters builds below (the CLI loads it with loadAdapterCode).
import '@baton/store-redis';
import '@baton/transport-nats';
import { runCli } from './program.js';

/** Continues once at once; the successor waits for `go` and returns its payload. */
const relay = defineWorkflow({
  name: 'cli_relay',
  version: 1,
  run: async (ctx, input: { round: number }) =>
    input.round === 0 ? ctx.continueAsNew({ round: 1 }) : ctx.waitForSignal<number>('go'),
});

describe('baton runs signal to a run that continued as new, on nats+redis', () => {
  const ns = `clicont${randomBytes(4).toString('hex')}`;
  const bus = natsTestUrl();
  const storeUrl = redisTestUrl();
  const env: Record<string, string> = {
    BATON_TRANSPORT_URL: bus,
    BATON_STORE_URL: storeUrl,
    ...isolatedEnv('transport', bus, ns),
    ...isolatedEnv('store', storeUrl, ns),
  };
  const adapters = operatorAdapters(readOperatorConfig(env));
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  let worker: Worker;

  const baton = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { env, io: { out: (t) => (out += t), err: (t) => (err += t) } });
    return { code, out, err };
  };

  beforeAll(async () => {
    await client.connect();
    worker = new Worker({
      transport: adapters.transport,
      store: adapters.store,
      workflows: [relay],
      fetchWaitMs: 100,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
    });
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    await worker.stop();
    await adapters.close();
    await removeIsolated('transport', bus, ns);
    await removeIsolated('store', storeUrl, ns);
  }, 60_000);

  it(
    'sends it on to the successor, and still refuses a run that finished without continuing',
    { timeout: 60_000 },
    async () => {
      const run = await client.start(relay, { round: 0 });
      const deadline = Date.now() + 20_000;
      let successor: string | undefined;
      while ((successor = (await adapters.store.runs.get(run.runId))?.continuedAs) === undefined) {
        if (Date.now() > deadline) throw new Error(`run ${run.runId} never continued`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const sent = await baton('runs', 'signal', run.runId, 'go', '--payload', '42');
      expect(sent).toMatchObject({
        code: 0,
        out: `signal 'go' sent to run ${run.runId} (continued as new: it goes on to run ${successor})\n`,
      });
      expect(await run.result({ timeoutMs: 30_000 })).toBe(42);
      const late = await baton('runs', 'signal', successor, 'go', '--payload', '1');
      expect(late.code).toBe(1);
      expect(late.err).toMatch(/is completed; a signal to a finished run is dropped, so none was sent/);
    },
  );
});
