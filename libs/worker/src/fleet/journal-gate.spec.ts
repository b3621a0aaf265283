import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport, WorkerReport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { fleet, until, type Fleet } from '../fleet.spec-helper.js';
import { resolveWorkerOptions } from '../options.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const step = defineActivity({ name: 'gate_step', run: async (n: number) => n + 1 });
const wf = defineWorkflow({ name: 'gate_wf', version: 1, run: async (ctx, n: number) => ctx.run(step, n) });

/** A worker of a release from before group commit, as its fleet report shows it. */
const OLD_WORKER: WorkerReport = {
  workerId: 'old-1',
  host: 'pod-old',
  pid: 1,
  batonVersion: '0.0.9',
  workflows: [{ name: 'gate_wf', versions: [1] }],
  startedAt: 0,
  lastRenewalAt: null,
  runsHeld: 0,
  concurrency: 10,
  draining: false,
};

async function grouped(store: Store, runId: string): Promise<boolean> {
  return (await store.journalIndex!.readPointers(runId, 0)).grouped;
}

describe('group commit by default: the fleet gate', () => {
  it('journals new runs per run while a live worker cannot read group journals, and groups them once none is left', async () => {
    current = fleet({ workflows: [wf], fleetJournalCheckMs: 100 });
    const f = current;
    await f.store.fleet.report(OLD_WORKER, 60_000);
    await f.spawn();
    const own = await f.client.start(wf, 1);
    expect(await own.result({ timeoutMs: 5_000 })).toBe(2);
    expect(await grouped(f.store, own.runId)).toBe(false);
    // The worker says what it reads; the old one says nothing.
    const listed = await f.store.fleet.list();
    expect(listed.find((r) => r.workerId === 'w1')?.readsGroupJournal).toBe(true);
    expect(listed.find((r) => r.workerId === 'old-1')?.readsGroupJournal).toBeUndefined();

    await f.store.fleet.forget('old-1');
    let later = await f.client.start(wf, 2);
    await until(
      async () => {
        await later.result({ timeoutMs: 5_000 });
        if (await grouped(f.store, later.runId)) return true;
        later = await f.client.start(wf, 2);
        return false;
      },
      5_000,
      'a new run to be grouped',
    );
    // Open for good: an old worker appearing later (a rollback must set journal: 'per-run') changes nothing.
    await f.store.fleet.report(OLD_WORKER, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    const after = await f.client.start(wf, 3);
    expect(await after.result({ timeoutMs: 5_000 })).toBe(4);
    expect(await grouped(f.store, after.runId)).toBe(true);
    // The run journaled on its own before is still read as such.
    expect((await f.client.history(own.runId)).length).toBeGreaterThan(0);
  });

  it("groups at once when told journal: 'group', whatever the fleet says", async () => {
    current = fleet({ workflows: [wf], journal: 'group' });
    const f = current;
    await f.store.fleet.report(OLD_WORKER, 60_000);
    await f.spawn();
    const run = await f.client.start(wf, 1);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(2);
    expect(await grouped(f.store, run.runId)).toBe(true);
  });

  it("journals every run per run when told journal: 'per-run', and still says it reads group journals", async () => {
    current = fleet({ workflows: [wf], journal: 'per-run' });
    const f = current;
    await f.spawn();
    const run = await f.client.start(wf, 1);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(2);
    expect(await grouped(f.store, run.runId)).toBe(false);
    expect((await f.store.fleet.list())[0]?.readsGroupJournal).toBe(true);
  });
});

describe('the default journal mode', () => {
  /** A store like PostgreSQL's (a journal index that does not group by default), or like Redis's. */
  const store = (groupsByDefault: boolean): Store => {
    const base = memoryStore();
    return { ...base, journalIndex: { ...base.journalIndex!, groupsByDefault } };
  };
  /** A bus whose own journal scans a shared log (as Kafka's does), or not (as NATS's). */
  const transport = (scansSharedLog: boolean): Transport => {
    const base = memoryTransport();
    return { ...base, journal: Object.create(base.journal, { scansSharedLog: { value: scansSharedLog } }) };
  };
  const mode = (s: Store, t: Transport, journal?: 'group' | 'per-run') =>
    resolveWorkerOptions({ transport: t, store: s, workflows: [wf], ...(journal && { journal }) }).journal;

  it('groups where the store groups by default, or where the bus journal scans a shared log', () => {
    expect(mode(store(true), transport(false))).toBe('group');
    expect(mode(store(true), transport(true))).toBe('group');
    // PostgreSQL on Kafka: a run journaled on its own there costs a bus append per step and a checkpoint per run.
    expect(mode(store(false), transport(true))).toBe('group');
    // PostgreSQL on NATS: a pointer call per flush costs one run more latency than it saves.
    expect(mode(store(false), transport(false))).toBe('per-run');
  });

  it('keeps the mode a worker is told', () => {
    expect(mode(store(false), transport(true), 'per-run')).toBe('per-run');
    expect(mode(store(false), transport(false), 'group')).toBe('group');
  });
});
