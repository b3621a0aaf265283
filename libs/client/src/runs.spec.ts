import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { childSignalName } from '@baton/core/runtime';
import { Client } from './index.js';

const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'failed on purpose' } };

/** A run of ops-wf brought to its end by hand, as a worker would (this package has none). */
async function finishedRun(store: Store, n: number): Promise<string> {
  const runId = `ops-run-${n}`;
  await store.runs.create({ runId, workflow: 'ops-wf', version: 1, input: { n }, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-ops', 5_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  await store.runs.finish(runId, lease.epoch, n % 2 === 1 ? FAILED : { status: 'completed', result: n });
  return runId;
}

describe('client.runs', () => {
  it('lists runs by filter in pages, walks them all, and counts them', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    const runIds = [];
    for (let n = 0; n < 5; n++) runIds.push(await finishedRun(store, n));

    const failed = await client.runs.list({ workflow: 'ops-wf', status: 'failed' });
    expect(failed.runs.map((r) => r.runId).sort()).toEqual(['ops-run-1', 'ops-run-3']);
    const first = await client.runs.list({ workflow: 'ops-wf', limit: 2 });
    expect(first.runs.map((r) => r.runId)).toEqual(['ops-run-4', 'ops-run-3']);
    expect(first.cursor).toEqual(expect.any(String));
    const all = [];
    for await (const run of client.runs.all({ workflow: 'ops-wf', limit: 2 })) all.push(run.runId);
    expect(all).toEqual([...runIds].reverse());
    expect((await client.runs.count()).byWorkflow['ops-wf']).toEqual({ completed: 3, failed: 2 });
  });

  it('needs the store, and says so', () => {
    const client = new Client({ transport: memoryTransport() });
    expect(() => client.runs.list()).toThrow(/client.runs.list\(\) reads the store/);
  });

  it('says what a suspended or paused run waits for, from the store alone', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    const suspend = async (runId: string, signals: string[], wakeAt: number | null): Promise<void> => {
      await store.runs.create({ runId, workflow: 'ops-wf', version: 1, input: null, idempotencyKey: null });
      const lease = await store.leases.acquire(runId, 'worker-ops', 5_000);
      if (!lease.ok) throw new Error(`could not lease ${runId}`);
      const epoch = lease.epoch;
      expect(await store.leases.suspend({ runId, epoch, wakeAt, signals, consumedSignalIds: [] })).toEqual({
        ok: true,
      });
    };
    const at = (await store.leases.now()) + 60_000;
    await suspend('waits-all', ['approve', 'baton.promise', childSignalName('child-7')], at);
    expect(await client.runs.waits('waits-all')).toEqual([
      { kind: 'signal', name: 'approve' },
      { kind: 'child', runId: 'child-7' },
      { kind: 'promise' },
      { kind: 'timer', at },
    ]);
    await suspend('waits-sleep', [], at);
    expect(await client.runs.waits('waits-sleep')).toEqual([{ kind: 'timer', at }]);
    await suspend('waits-paused', ['approve'], null);
    expect(await client.runs.pause('waits-paused', 'checking the data')).toBe('paused');
    expect(await client.runs.waits('waits-paused')).toEqual([{ kind: 'pause', reason: 'checking the data' }]);
    expect(await client.runs.waits(await finishedRun(store, 8))).toEqual([]);
    expect(await client.runs.waits('no-such-run')).toEqual([]);
  });
});
