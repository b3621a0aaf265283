/**
 * Retention on the real adapters (NATS + Redis, NATS + Postgres, Kafka + Redis), with a real
 * Worker whose retention sweep runs every 200 ms with a time to live of 1.5 s:
 * - a finished run older than the TTL loses its store data (record, checkpoints, lease) and, on
 *   NATS, its journal subject, and with group commit its pointers; on Kafka a journal of its own
 *   stays (the topic's retention.ms removes it);
 * - a suspended run (waiting on a signal) older than the TTL is untouched: its record, lease,
 *   checkpoints and journal stay, and a signal still completes it;
 * - result() of a swept run fails at once with RunDeletedError;
 * - two workers sweeping a backlog delete each run exactly once;
 * - client.runs.delete refuses a run that is not finished, naming its status, and deletes a finished
 *   one at once;
 * - with group commit (pairs whose bus has group logs and whose store has a journal index: NATS or
 *   Kafka, with Redis), the group records of deleted runs are trimmed, and every record a kept run
 *   names stays.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { supportsGroupJournal } from '@baton/core/runtime';
import { Worker } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

const TTL_MS = 1_500;

const shout = defineActivity({ name: 'shout', run: async (text: string) => text.toUpperCase() });

const quick = defineWorkflow({
  name: 'ret_quick',
  version: 1,
  run: async (ctx, input: string) => ctx.run(shout, input),
});

const waiting = defineWorkflow({
  name: 'ret_waiting',
  version: 1,
  run: async (ctx, input: string) => {
    const first = await ctx.run(shout, input);
    const go = await ctx.waitForSignal<string>('go');
    return `${first}:${go}`;
  },
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(IN_PROCESS_PAIRS)('retention on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'ret');
  const workers = ns.workers;
  let transport: Transport;
  let store: Store;
  let client: Client;
  beforeAll(() => {
    ({ transport, store, client } = ns);
  });

  async function startWorker(retentionMs: number): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows: [quick, waiting],
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      checkpointEvery: 1,
      retentionMs,
      retentionSweepMs: 200,
    });
    await worker.start();
    workers.push(worker);
    return worker;
  }

  it('purges finished runs past the TTL and never touches a suspended one', async () => {
    await startWorker(TTL_MS);
    const parked = await client.start(waiting, 'parked');
    await until(
      'the waiting run is suspended',
      async () => (await store.runs.get(parked.runId))?.status === 'suspended',
    );
    const parkedHistory = await client.history(parked.runId);
    expect(parkedHistory.length).toBeGreaterThan(0);

    const done = await client.start(quick, 'done');
    await expect(done.result({ timeoutMs: 20_000 })).resolves.toBe('DONE');
    expect((await client.history(done.runId)).length).toBeGreaterThan(0);
    // A grouped run's journal is its pointers, deleted with the run on every bus.
    const grouped = (await store.journalIndex?.readPointers(done.runId, 0))?.grouped === true;
    await until('the finished run is deleted', async () => (await store.runs.get(done.runId)) === undefined);

    expect(await store.leases.get(done.runId)).toBeUndefined();
    expect(await store.checkpoints.list(done.runId)).toEqual([]);
    // Its outcome is gone, and result() says so at once (no timeout given: it would wait for good).
    await expect(done.result()).rejects.toMatchObject({
      code: 'BATON_RUN_DELETED',
      runId: done.runId,
      message: expect.stringContaining(`run ${done.runId} was deleted by the retention sweep`),
    });
    if (transport.journal.purgeMode === 'deletes' || grouped) {
      expect(await client.history(done.runId)).toEqual([]);
    } else expect((await client.history(done.runId)).length).toBeGreaterThan(0);

    // The suspended run is older than the TTL, yet all of it is still there, and it goes on.
    expect((await store.runs.get(parked.runId))?.status).toBe('suspended');
    expect((await store.leases.get(parked.runId))?.state).toBe('suspended');
    expect((await store.checkpoints.list(parked.runId)).length).toBeGreaterThan(0);
    expect(await client.history(parked.runId)).toEqual(parkedHistory);
    await client.signal(parked.runId, 'go', 'now');
    await expect(parked.result({ timeoutMs: 20_000 })).resolves.toBe('PARKED:now');
  }, 60_000);

  it('a backlog of expired runs is deleted over passes of several batches, each run once', async () => {
    // Runs finished before any worker sweeps: a backlog, as when retention is turned on.
    const runIds: string[] = [];
    for (let i = 0; i < 40; i += 1) {
      const runId = `ret-backlog-${i}-${Date.now()}`;
      await store.runs.create({ runId, workflow: 'ret_quick', version: 1, input: 'x', idempotencyKey: null });
      const lease = await store.leases.acquire(runId, 'backlog-writer', 5_000);
      if (!lease.ok) throw new Error('lease');
      await store.runs.finish(runId, lease.epoch, { status: 'completed', result: 'X' });
      runIds.push(runId);
    }
    const expired: string[] = [];
    for (const _ of [0, 1]) {
      const worker = new Worker({
        transport,
        store,
        workflows: [quick],
        retentionMs: 500,
        retentionSweepMs: 100,
        retentionTombstoneMs: 60_000,
        onEvent: (e) => void (e.type === 'runs-expired' && expired.push(...e.runIds)),
      });
      await worker.start();
      workers.push(worker);
    }
    await until('the backlog is deleted', async () =>
      (await Promise.all(runIds.map((id) => store.runs.get(id)))).every((run) => run === undefined),
    );
    // runs-expired is told after a batch's journal purges, which trail the store deletes.
    await until('every deleted run to be reported', () =>
      Promise.resolve(runIds.every((id) => expired.includes(id))),
    );
    const ours = expired.filter((id) => runIds.includes(id));
    expect(ours.sort()).toEqual([...runIds].sort());
    for (const runId of runIds) expect(await store.retention.tombstone(runId)).toMatchObject({ runId });
  }, 60_000);

  it('client.runs.delete refuses an unfinished run, naming its status, and deletes a finished one', async () => {
    await startWorker(0);
    const parked = await client.start(waiting, 'busy');
    await until(
      'the waiting run is suspended',
      async () => (await store.runs.get(parked.runId))?.status === 'suspended',
    );
    await expect(client.runs.delete(parked.runId)).rejects.toMatchObject({
      code: 'BATON_RUN_STATE',
      status: 'suspended',
      message: expect.stringContaining(`run ${parked.runId} is suspended`),
    });
    expect((await store.runs.get(parked.runId))?.status).toBe('suspended');
    expect((await client.history(parked.runId)).length).toBeGreaterThan(0);

    const done = await client.start(quick, 'gone');
    await expect(done.result({ timeoutMs: 20_000 })).resolves.toBe('GONE');
    expect(await client.runs.delete(done.runId)).toEqual({
      runId: done.runId,
      journal: transport.journal.purgeMode === 'deletes' ? 'purged' : 'retention',
    });
    expect(await store.runs.get(done.runId)).toBeUndefined();
    if (transport.journal.purgeMode === 'deletes') expect(await client.history(done.runId)).toEqual([]);
    await expect(client.runs.delete(done.runId)).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });

    await client.signal(parked.runId, 'go', 'ok');
    await expect(parked.result({ timeoutMs: 20_000 })).resolves.toBe('BUSY:ok');
  }, 60_000);

  it('group journal: trims the group records of deleted runs, and keeps every record a kept run names', async (test) => {
    if (!supportsGroupJournal(transport, store)) test.skip();
    const index = store.journalIndex!;
    const groupLog = transport.groupLog!;
    const worker = new Worker({
      transport,
      store,
      workflows: [quick, waiting],
      journal: 'group',
      leaseMs: 3_000,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      checkpointEvery: 1,
      retentionMs: TTL_MS,
      retentionSweepMs: 200,
      retentionTombstoneMs: 60_000,
      groupLogTrimMs: 200,
    });
    await worker.start();
    workers.push(worker);
    const pointersOf = async (runId: string) => (await index.readPointers(runId, 0)).pointers;

    // Runs that finish and are swept first, then one that stays (suspended) behind them.
    const swept = await Promise.all(Array.from({ length: 10 }, (_, i) => client.start(quick, `g${i}`)));
    for (const [i, handle] of swept.entries()) {
      await expect(handle.result({ timeoutMs: 20_000 })).resolves.toBe(`G${i}`);
    }
    const sweptPointers = (await Promise.all(swept.map((h) => pointersOf(h.runId)))).flat();
    expect(sweptPointers.length).toBeGreaterThanOrEqual(swept.length);
    const kept = await client.start(waiting, 'kept');
    await until(
      'the kept run is suspended',
      async () => (await store.runs.get(kept.runId))?.status === 'suspended',
    );
    const keptPointers = await pointersOf(kept.runId);
    expect(keptPointers.length).toBeGreaterThan(0);
    const log = keptPointers[0]!.log;
    const keptRecords = keptPointers.filter((p) => p.log === log).map((p) => p.record);
    const floor = Math.min(...keptRecords);
    const gone = sweptPointers.filter((p) => p.log === log && p.record < floor).map((p) => p.record);
    expect(gone.length).toBeGreaterThan(0);
    const keptHistory = await client.history(kept.runId);

    await until('the finished runs are deleted', async () =>
      (await Promise.all(swept.map((h) => store.runs.get(h.runId)))).every((run) => run === undefined),
    );
    await until('the log is trimmed to the kept run', async () => {
      const use = (await index.groupLogUse()).find((u) => u.log === log);
      return use?.oldestNeeded === floor;
    });
    // On Kafka too: a trim deletes a partition's front up to the first record no trim asked for,
    // and this worker's log is the only group log of the namespace.
    if (transport.journal.purgeMode === 'deletes' || transport.name === 'kafka') {
      await until(
        "the deleted runs' records are gone from the bus",
        async () => (await groupLog.readGroupRecords(log, gone)).size === 0,
      );
    }
    // Nothing the kept run names went: its records, its history, and its resume.
    expect([...(await groupLog.readGroupRecords(log, keptRecords)).keys()].sort((a, b) => a - b)).toEqual(
      [...new Set(keptRecords)].sort((a, b) => a - b),
    );
    expect(await client.history(kept.runId)).toEqual(keptHistory);
    await client.signal(kept.runId, 'go', 'later');
    await expect(kept.result({ timeoutMs: 20_000 })).resolves.toBe('KEPT:later');
  }, 60_000);
});
