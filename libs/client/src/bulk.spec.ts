import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store, Transport } from '@baton/core/adapter';
import { decodeMessage, encodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'failed on purpose' } };

/** A run of bulk-wf left as a worker would leave it: finished (completed / failed) or held. */
async function run(store: Store, runId: string, end: 'completed' | 'failed' | 'running'): Promise<void> {
  await store.runs.create({ runId, workflow: 'bulk-wf', version: 1, input: {}, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-bulk', 60_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  if (end === 'running') return;
  await store.runs.finish(runId, lease.epoch, end === 'failed' ? FAILED : { status: 'completed', result: 1 });
}

/** Five failed runs, two completed and two running, in a fresh memory store. */
async function fleet(
  transport: Transport = memoryTransport(),
  wrap: (store: Store) => Store = (store) => store,
): Promise<{ client: Client; store: Store }> {
  const store = memoryStore();
  for (let n = 0; n < 5; n++) await run(store, `f${n}`, 'failed');
  for (let n = 0; n < 2; n++) await run(store, `c${n}`, 'completed');
  for (let n = 0; n < 2; n++) await run(store, `r${n}`, 'running');
  return { client: new Client({ transport, store: wrap(store) }), store };
}

async function statuses(store: Store, ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await store.runs.get(id))?.status ?? 'gone'));
}

describe('client.bulk', () => {
  it('counts what an action would take: the filter, narrowed to the action’s statuses', async () => {
    const { client } = await fleet();
    expect(await client.bulk.count({ workflow: 'bulk-wf' })).toBe(9);
    expect(await client.bulk.count({ workflow: 'bulk-wf' }, 'retry')).toBe(5);
    expect(await client.bulk.count({}, 'delete')).toBe(7);
    expect(await client.bulk.count({}, 'cancel')).toBe(2);
    // A status given wins over the action's.
    expect(await client.bulk.count({ status: 'completed' }, 'retry')).toBe(2);
    expect(await client.bulk.count({ runIdPrefix: 'f' }, 'retry')).toBe(5);
    await expect(client.bulk.count({ status: 'bogus' as never })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
  });

  it('counts past one page, from the kept counts or page by page, alike', async () => {
    const store = memoryStore();
    for (let n = 0; n < 1_203; n++)
      await run(store, `m${String(n).padStart(4, '0')}`, n % 3 === 0 ? 'failed' : 'completed');
    const client = new Client({ transport: memoryTransport(), store });
    expect(await client.bulk.count({}, 'retry')).toBe(401);
    expect(await client.bulk.count({ workflow: 'bulk-wf' }, 'delete')).toBe(1_203);
    expect(await client.bulk.count({ status: ['completed', 'completed'] })).toBe(802);
    // A prefix filter is counted page by page.
    expect(await client.bulk.count({ runIdPrefix: 'm' }, 'delete')).toBe(1_203);
    expect(await client.bulk.count({ runIdPrefix: 'm1' }, 'delete')).toBe(203);
  });

  it('pauses every run in flight and resumes every paused one, refusing what is neither', async () => {
    const transport = memoryTransport();
    const { client, store } = await fleet(transport);
    await store.runs.create({
      runId: 'p0',
      workflow: 'bulk-wf',
      version: 1,
      input: {},
      idempotencyKey: null,
    });
    expect(await client.bulk.count({}, 'pause')).toBe(3);
    const paused = await client.bulk.run('pause', {}, { reason: 'maintenance' });
    expect(paused).toMatchObject({
      action: 'pause',
      matched: 3,
      refused: [],
      failed: [],
      interrupted: false,
    });
    // The pending run is paused at once; the two held ones are asked to pause at their next step.
    expect(await statuses(store, ['p0'])).toEqual(['paused']);
    expect((await store.leases.get('r0'))?.pauseRequested).toBe(true);
    expect((await store.leases.get('p0'))?.pauseReason).toBe('maintenance');
    // Bulk resume takes paused runs: a held run with a pause requested is still `running`, and is
    // refused like a finished one (`client.runs.resume(id)` withdraws its request one run at a time).
    const resumed = await client.bulk.run('resume', { status: ['paused', 'running', 'completed'] });
    expect(resumed.succeeded).toEqual(['p0']);
    expect(resumed.refused.map((r) => r.id).sort()).toEqual(['c0', 'c1', 'r0', 'r1']);
    expect(resumed.refused.find((r) => r.id === 'r0')?.reason).toMatch(/running/);
    expect((await store.leases.get('p0'))?.state).toBe('held');
    expect(await client.runs.resume('r0')).toBe(true);
    expect((await store.leases.get('r0'))?.pauseRequested).toBeUndefined();
    expect(await client.bulk.count({}, 'resume')).toBe(0);
  });

  it('retries every failed run, reports progress, and a second pass finds nothing left', async () => {
    const transport = memoryTransport();
    const { client, store } = await fleet(transport);
    const progress: number[] = [];
    const summary = await client.bulk.run(
      'retry',
      { workflow: 'bulk-wf' },
      { concurrency: 2, onProgress: (p) => progress.push(p.done) },
    );
    expect(summary).toMatchObject({
      action: 'retry',
      matched: 5,
      refused: [],
      failed: [],
      interrupted: false,
    });
    expect([...summary.succeeded].sort()).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect(await statuses(store, ['f0', 'f4', 'c0'])).toEqual(['pending', 'pending', 'completed']);
    // Each retry put one resume message on the run queue.
    const queued = await transport.runQueue.fetch({ max: 20, expiresMs: 50 });
    expect(queued.map((d) => decodeMessage(d.data)).filter((m) => m.kind === 'resume')).toHaveLength(5);

    const again = await client.bulk.run('retry', { workflow: 'bulk-wf' });
    expect(again).toMatchObject({ matched: 0, succeeded: [], refused: [], failed: [] });
  });

  it('refuses runs of a status the action does not take, naming it, and changes nothing of them', async () => {
    const { client, store } = await fleet();
    const summary = await client.bulk.run('retry', { status: ['completed', 'running'] });
    expect(summary.succeeded).toEqual([]);
    expect(summary.refused).toHaveLength(4);
    expect(summary.refused).toContainEqual({
      id: 'c0',
      reason: 'retry takes runs that are failed; this one is completed',
    });
    expect(summary.refused).toContainEqual({
      id: 'r1',
      reason: 'retry takes runs that are failed; this one is running',
    });
    expect(await statuses(store, ['c0', 'c1', 'r0', 'r1'])).toEqual([
      'completed',
      'completed',
      'running',
      'running',
    ]);
  });

  it('deletes finished runs; run again, the deleted ones are no longer matched', async () => {
    const { client, store } = await fleet();
    const summary = await client.bulk.run('delete', { runIdPrefix: 'c' });
    expect([...summary.succeeded].sort()).toEqual(['c0', 'c1']);
    expect(await statuses(store, ['c0', 'c1', 'f0'])).toEqual(['gone', 'gone', 'failed']);
    expect((await client.bulk.run('delete', { runIdPrefix: 'c' })).matched).toBe(0);
  });

  it('cancels the runs under way, with the reason', async () => {
    const { client, store } = await fleet();
    const summary = await client.bulk.run('cancel', {}, { reason: 'maintenance window' });
    expect([...summary.succeeded].sort()).toEqual(['r0', 'r1']);
    // The cancel is a run-queue message; the store records it when a worker takes it (not here).
    expect(await statuses(store, ['r0', 'f0'])).toEqual(['running', 'failed']);
  });

  it('stops taking runs when interrupted, and a second run finishes the rest', async () => {
    const { client } = await fleet();
    const stop = new AbortController();
    const first = await client.bulk.run(
      'retry',
      {},
      { concurrency: 1, signal: stop.signal, onProgress: (p) => p.done === 2 && stop.abort() },
    );
    expect(first.interrupted).toBe(true);
    expect(first.succeeded).toHaveLength(2);
    const second = await client.bulk.run('retry', {});
    expect(second.interrupted).toBe(false);
    expect(second.succeeded).toHaveLength(3);
    expect(new Set([...first.succeeded, ...second.succeeded]).size).toBe(5);
  });

  it('counts an error that is not a refusal as failed, names it, and goes on', async () => {
    // A client with a store records a cancel there (client.cancel), so the store fails it here.
    const flaky = (store: Store): Store =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property !== 'control') return Reflect.get(target, property, receiver) as unknown;
          return {
            ...target.control,
            requestCancel: async (runId: string, reason?: string) => {
              if (runId === 'r0') throw new Error('store unreachable (test)');
              return target.control.requestCancel(runId, reason);
            },
          };
        },
      });
    const { client } = await fleet(memoryTransport(), flaky);
    const summary = await client.bulk.run('cancel', {});
    expect(summary.succeeded).toEqual(['r1']);
    expect(summary.failed).toEqual([{ id: 'r0', error: 'store unreachable (test)' }]);
  });

  it('refuses bad options and an invalid filter before doing anything', async () => {
    const { client, store } = await fleet();
    await expect(client.bulk.run('retry', {}, { concurrency: 0 })).rejects.toThrow(
      /concurrency is 0; give a whole number from 1 to 64/,
    );
    await expect(client.bulk.run('retry', { cursor: 'x' } as never)).rejects.toThrow(/leave it out/);
    await expect(client.bulk.run('retry', { status: 'bogus' as never })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
    await expect(client.bulk.run('archive' as never, {})).rejects.toThrow(/unknown action 'archive'/);
    expect(await statuses(store, ['f0', 'f1'])).toEqual(['failed', 'failed']);
  });
});

describe('client.bulk.redriveDeadLetters', () => {
  it('redrives readable letters (by code), refuses unreadable ones, and takes none twice', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const resume = (runId: string) => encodeMessage({ kind: 'resume', runId, reason: 'handoff', since: 1 });
    await transport.deadLetters.add({
      data: resume('a'),
      headers: {},
      code: 'unknown-run',
      reason: 'x',
      at: 1,
    });
    await transport.deadLetters.add({
      data: resume('b'),
      headers: {},
      code: 'repeated-failure',
      reason: 'y',
      at: 2,
    });
    await transport.deadLetters.add({
      data: new TextEncoder().encode('{not json'),
      headers: {},
      code: 'unknown-run',
      reason: 'bad bytes',
      at: 3,
    });

    const byCode = await client.bulk.redriveDeadLetters({ code: 'unknown-run' });
    expect(byCode.succeeded).toHaveLength(1);
    expect(byCode.refused).toHaveLength(1);
    expect(byCode.refused[0]!.reason).toMatch(/is not redriven: unparseable run message .*purge it/);
    const left = await client.deadLetters.list();
    expect(left.letters.map((l) => l.code).sort()).toEqual(['repeated-failure', 'unknown-run']);

    const all = await client.bulk.redriveDeadLetters();
    expect(all.succeeded).toHaveLength(1);
    expect(all.refused).toHaveLength(1);
    const queued = (await transport.runQueue.fetch({ max: 10, expiresMs: 50 }))
      .map((d) => decodeMessage(d.data).runId)
      .sort();
    expect(queued).toEqual(['a', 'b']);
  });
});
