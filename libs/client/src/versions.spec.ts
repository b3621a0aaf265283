import { beforeEach, describe, expect, it } from 'vitest';
import type { RunStatus, Store, Transport, WorkerReport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { startMessage } from '@baton/core/runtime';
import { Client } from './index.js';

function report(workerId: string, workflows: WorkerReport['workflows'], draining = false): WorkerReport {
  return {
    workerId,
    host: 'node-1',
    pid: 100,
    batonVersion: '0.1.0',
    workflows,
    startedAt: 1_000,
    lastRenewalAt: null,
    runsHeld: 0,
    concurrency: 8,
    draining,
  };
}

let seq = 0;
/** The epoch of each run's last lease, to finish it later as its owner. */
const epochs = new Map<string, number>();
/** A run of `workflow@version` brought to `status` through the store contract. */
async function run(store: Store, workflow: string, version: number, status: RunStatus): Promise<string> {
  const runId = `run-${++seq}`;
  await store.runs.create({ runId, workflow, version, input: null, idempotencyKey: null });
  if (status === 'pending') return runId;
  if (status === 'paused') {
    expect(await store.control.requestPause(runId)).toEqual({ found: true, state: 'paused' });
    return runId;
  }
  const lease = await store.leases.acquire(runId, 'w', 60_000);
  if (!lease.ok) throw new Error(`lease of ${runId} refused`);
  epochs.set(runId, lease.epoch);
  if (status === 'running') return runId;
  if (status === 'suspended') {
    await store.leases.suspend({
      runId,
      epoch: lease.epoch,
      wakeAt: null,
      signals: ['go'],
      consumedSignalIds: [],
    });
    return runId;
  }
  await store.runs.finish(runId, lease.epoch, { status: 'completed', result: 'ok' });
  return runId;
}

async function deadLetterStart(transport: Transport, workflow: string, version: number): Promise<void> {
  const { data } = startMessage({ runId: `dl-${++seq}`, workflow, version, input: null });
  await transport.deadLetters.add({
    data,
    headers: {},
    reason: 'no worker has it',
    code: 'unknown-workflow',
    at: 1,
  });
}

describe('client.fleet.versions and client.fleet.drained', () => {
  let store: Store;
  let transport: Transport;
  let client: Client;
  beforeEach(async () => {
    store = memoryStore();
    transport = memoryTransport();
    client = new Client({ transport, store });
    // v1 is being replaced by v2: orders@1 still has unfinished runs, orders@2 only finished ones.
    for (const status of ['pending', 'running', 'suspended', 'completed'] as const)
      await run(store, 'orders', 1, status);
    await run(store, 'orders', 2, 'completed');
    // billing@3: one paused run, and only a draining worker registers it.
    await run(store, 'billing', 3, 'paused');
    // orders@3: no run, but a start of it was dead-lettered (the producer deployed first).
    await deadLetterStart(transport, 'orders', 3);
    await store.fleet.report(report('w-old', [{ name: 'orders', versions: [1] }]), 60_000);
    await store.fleet.report(report('w-new', [{ name: 'orders', versions: [1, 2] }]), 60_000);
    await store.fleet.report(report('w-going', [{ name: 'billing', versions: [3] }], true), 60_000);
  });

  it('reports per version the work that needs it, who can take it, and drained or stranded', async () => {
    const { versions, complete } = await client.fleet.versions();
    expect(complete).toBe(true);
    const by = Object.fromEntries(versions.map((v) => [`${v.workflow}@${v.version}`, v]));
    expect(Object.keys(by)).toEqual(['billing@3', 'orders@1', 'orders@2', 'orders@3']);
    expect(by['orders@1']).toEqual({
      workflow: 'orders',
      version: 1,
      unfinished: { total: 3, byStatus: { pending: 1, running: 1, suspended: 1 } },
      deadLetteredStarts: 0,
      workers: ['w-new', 'w-old'],
      drainingWorkers: [],
      drained: false,
      stranded: false,
    });
    expect(by['orders@2']).toMatchObject({ unfinished: { total: 0 }, workers: ['w-new'], drained: true });
    expect(by['orders@3']).toMatchObject({
      deadLetteredStarts: 1,
      workers: [],
      drained: false,
      stranded: true,
    });
    expect(by['billing@3']).toMatchObject({
      unfinished: { total: 1, byStatus: { paused: 1 } },
      workers: [],
      drainingWorkers: ['w-going'],
      stranded: true,
    });
    const onlyBilling = await client.fleet.versions({ workflow: 'billing' });
    expect(onlyBilling.versions.map((v) => `${v.workflow}@${v.version}`)).toEqual(['billing@3']);
  });

  it('keeps drained exact when the walk stops at its limit, and says the counts are incomplete', async () => {
    const { versions, complete } = await client.fleet.versions({ scanLimit: 1 });
    expect(complete).toBe(false);
    const drained = Object.fromEntries(versions.map((v) => [`${v.workflow}@${v.version}`, v.drained]));
    // The walk saw one unfinished run; the versions it did not see were asked one by one.
    expect(drained).toEqual({ 'billing@3': false, 'orders@1': false, 'orders@2': true, 'orders@3': false });
  });

  it('answers the gate for one version, and turns drained once its last run finishes', async () => {
    expect((await client.fleet.drained('orders', 2)).drained).toBe(true);
    const v1 = await client.fleet.drained('orders', 1);
    expect(v1).toMatchObject({ drained: false, unfinished: { total: 3 }, workers: ['w-new', 'w-old'] });
    expect((await client.fleet.drained('orders', 3)).deadLetteredStarts).toBe(1);

    const { runs } = await store.runs.list({
      workflow: 'orders',
      version: 1,
      status: ['pending', 'running', 'suspended'],
    });
    for (const r of runs) {
      let epoch = epochs.get(r.runId);
      if (r.status !== 'running') {
        const lease = await store.leases.acquire(r.runId, 'w2', 60_000);
        if (!lease.ok) throw new Error(`lease of ${r.runId} refused`);
        epoch = lease.epoch;
      }
      await store.runs.finish(r.runId, epoch!, { status: 'completed', result: 'ok' });
    }
    expect((await client.fleet.drained('orders', 1)).drained).toBe(true);
  });

  it('refuses a malformed version and a dead-letter queue longer than it may read', async () => {
    await expect(client.fleet.drained('orders', 0)).rejects.toThrow(/give a workflow name and a version ≥ 1/);
    await expect(client.fleet.versions({ scanLimit: 0 })).rejects.toThrow(/scanLimit is 0/);
    await deadLetterStart(transport, 'orders', 1);
    await expect(client.fleet.drained('orders', 1, { deadLetterLimit: 1 })).rejects.toThrow(
      /more than 1 letters/,
    );
  });
});
