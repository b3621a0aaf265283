/**
 * `baton replay-check` on NATS + Redis, run in process (runCli) against runs a real Worker journaled
 * and suspended: the unchanged module passes (exit 0), a module that renames a step lists every
 * run at that step (exit 1, as a table and as JSON), a module that does not load is a usage error
 * (exit 2), and the runs are left as they were.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type ReplayCheckReport } from '@baton/client';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
// The code of the adapters operatorAdapters builds below (the CLI loads it with loadAdapterCode).
import '@baton/store-redis';
import '@baton/transport-nats';
import { runCli } from './program.js';
import { rcOrder } from './replay-check-v1.spec-helper.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const V1 = join(HERE, 'replay-check-v1.spec-helper.ts');
const RENAMED = join(HERE, 'replay-check-renamed.spec-helper.ts');

describe('baton replay-check on nats+redis', () => {
  const ns = `rccli${randomBytes(4).toString('hex')}`;
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

  const batonWith = async (
    interrupt: AbortSignal | undefined,
    ...argv: string[]
  ): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const io = { out: (t: string) => (out += t), err: (t: string) => (err += t) };
    const code = await runCli(argv, { env, io, ...(interrupt !== undefined && { interrupt }) });
    return { code, out, err };
  };
  const baton = (...argv: string[]): ReturnType<typeof batonWith> => batonWith(undefined, ...argv);

  beforeAll(async () => {
    await client.connect();
    worker = new Worker({
      transport: adapters.transport,
      store: adapters.store,
      workflows: [rcOrder],
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

  it('passes the unchanged code, lists the runs a renamed step breaks, and changes nothing', async () => {
    const runs = [await client.start(rcOrder, 'one'), await client.start(rcOrder, 'two')];
    for (const run of runs) {
      const deadline = Date.now() + 20_000;
      while ((await adapters.store.runs.get(run.runId))?.status !== 'suspended') {
        if (Date.now() > deadline) throw new Error(`run ${run.runId} did not suspend`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const historyBefore = await Promise.all(runs.map((r) => client.history(r.runId)));

    const same = await baton('replay-check', '--workflows', V1);
    expect(same).toMatchObject({ code: 0, err: '' });
    expect(same.out).toContain(
      '2 run(s) checked: 2 ok, 0 nondeterministic, 0 failed, 0 skipped, 0 not checkable',
    );

    const withAll = await baton('replay-check', '--workflows', V1, '--all', '--workflow', 'rc_cli_order');
    expect(withAll.code).toBe(0);
    for (const run of runs) expect(withAll.out).toContain(run.runId);
    expect(withAll.out).toContain('3 steps replayed; waits at step #3');

    // --wide: the detail whole; by default the table fits 120 columns, the detail shortened.
    const broken = await baton('replay-check', '--workflows', RENAMED, '--wide');
    expect(broken.code).toBe(1);
    for (const run of runs) expect(broken.out).toContain(run.runId);
    expect(broken.out).toContain(
      'step #1: the journal has activity:b, the new code asks for activity:b_renamed',
    );
    expect(broken.out).toContain('2 run(s) checked: 0 ok, 2 nondeterministic');
    const narrow = await baton('replay-check', '--workflows', RENAMED);
    expect(narrow.code).toBe(1);
    for (const run of runs) expect(narrow.out).toContain(run.runId);
    expect(narrow.out).toContain('step #1: the journal has activity:b');
    for (const line of narrow.out.split('\n')) expect(line.length).toBeLessThanOrEqual(120);

    const asJson = await baton('replay-check', '--workflows', RENAMED, '--json', '--max-runs', '1');
    expect(asJson.code).toBe(1);
    const report = JSON.parse(asJson.out) as ReplayCheckReport;
    expect(report).toMatchObject({
      truncated: true,
      counts: { checked: 1, nondeterministic: 1 },
      runs: [{ result: 'nondeterministic', seq: 1, expected: 'activity:b', found: 'activity:b_renamed' }],
    });

    const missing = await baton('replay-check', '--workflows', join(HERE, 'no-such-module.js'));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--workflows: module '.*no-such-module\.js' could not be loaded/);
    const none = await baton('replay-check');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/replay-check needs --workflows <module>/);
    // Ctrl-C (main.ts aborts the interrupt signal): the check stops, and the exit code says so.
    const ctrlC = new AbortController();
    ctrlC.abort();
    const interrupted = await batonWith(ctrlC.signal, 'replay-check', '--workflows', V1);
    expect(interrupted).toMatchObject({ code: 130, out: '' });
    expect(interrupted.err).toBe(
      'interrupted: stopped before every item was reached; run the same command again\n',
    );

    expect(await Promise.all(runs.map((r) => client.history(r.runId)))).toEqual(historyBefore);
    for (const run of runs) await client.signal(run.runId, 'go', null);
    await expect(runs[0]!.result({ timeoutMs: 20_000 })).resolves.toBe('one>a>b>c');
    await expect(runs[1]!.result({ timeoutMs: 20_000 })).resolves.toBe('two>a>b>c');
  }, 90_000);
});
