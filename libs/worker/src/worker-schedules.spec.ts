/**
 * Schedules through workers (memory adapters, no presence, so every worker scans every period and
 * only the store's compare-and-set keeps them apart): each due time starts exactly one run across
 * three workers, including when the worker that fired it is cut off; a paused schedule starts
 * nothing; the overlap policies hold back a due time while the previous run is still going.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const SECOND = 1_000;

function tick(ledger: Ledger, delayMs = 0) {
  const note = defineActivity({
    name: 'note_tick',
    run: async (input: { label: string }, io) => {
      ledger.record(io.runId);
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: io.signal }).catch(() => undefined);
      return input.label;
    },
  });
  return defineWorkflow({
    name: 'tick',
    version: 1,
    run: async (ctx, input: { label: string }) => ctx.run(note, input),
  });
}

/** The schedule's runs in the store, by due time (from their idempotency keys), oldest first. */
async function scheduledRuns(store: Store, scheduleId: string): Promise<{ dueAt: number; runId: string }[]> {
  const page = await store.runs.list({ idempotencyKeyPrefix: `schedule:${scheduleId}:`, limit: 1_000 });
  return page.runs
    .map((r) => ({
      dueAt: Date.parse(r.idempotencyKey!.slice(`schedule:${scheduleId}:`.length)),
      runId: r.runId,
    }))
    .sort((a, b) => a.dueAt - b.dueAt);
}

/** Every second between the first and the last due time has exactly one run. */
function expectEverySecondOnce(runs: { dueAt: number }[]): void {
  const dueTimes = runs.map((r) => r.dueAt);
  expect(new Set(dueTimes).size).toBe(dueTimes.length);
  for (let i = 1; i < dueTimes.length; i++) expect(dueTimes[i]! - dueTimes[i - 1]!).toBe(SECOND);
}

describe('schedules on workers', () => {
  it('starts exactly one run per due time across three scanning workers, even when the firing worker is cut off', async () => {
    const ledger = new Ledger();
    const workflow = tick(ledger);
    const f = (current = fleet({ workflows: [workflow], scheduleScanMs: 50 }));
    await Promise.all([f.spawn(), f.spawn(), f.spawn()]);
    await f.client.schedules.create(
      workflow,
      { label: 'every second' },
      { scheduleId: 'each-second', every: '1s' },
    );

    await until(async () => (await scheduledRuns(f.store, 'each-second')).length >= 2, 10_000, 'two firings');
    // Cut off the worker that fired last, mid-period: the others go on with the next due times.
    const firer = f.workers.find((w) => w.events.some((e) => e.type === 'schedule-fired'))!;
    firer.crash();
    await until(
      async () => (await scheduledRuns(f.store, 'each-second')).length >= 4,
      10_000,
      'two more firings',
    );
    await f.client.schedules.pause('each-second');
    const runs = await scheduledRuns(f.store, 'each-second');
    expectEverySecondOnce(runs);
    for (const { runId } of runs) {
      await until(
        async () => (await f.store.runs.get(runId))?.status === 'completed',
        10_000,
        `run ${runId}`,
      );
      expect(ledger.count(runId)).toBe(1);
    }
    // Every worker's firings were different due times: the compare-and-set let one through each.
    const fired = f.workers.flatMap((w) =>
      w.events.flatMap((e) => (e.type === 'schedule-fired' ? e.dueTimes : [])),
    );
    expect(new Set(fired).size).toBe(fired.length);
  });

  it("a worker that dies between sending a due time's start and moving the schedule on neither skips nor doubles it", async () => {
    const ledger = new Ledger();
    const workflow = tick(ledger);
    const f = (current = fleet({ workflows: [workflow], scheduleScanMs: 50 }));
    let frozenAt: string | undefined;
    // The first worker freezes forever at the fault point, as a SIGKILL would stop it, and is cut off.
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'schedule-starts-sent') return;
        frozenAt = info.runId;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    await f.client.schedules.create(
      workflow,
      { label: 'x' },
      { scheduleId: 'killed', every: '1s', overlap: 'allow' },
    );
    await until(() => frozenAt !== undefined, 10_000, 'the doomed worker to fire');
    const before = await f.store.schedules.get('killed');
    // Its start went out; the schedule did not move on.
    expect(before!.lastRunId).toBeNull();
    await f.spawn();
    await until(
      async () => (await scheduledRuns(f.store, 'killed')).length >= 3,
      10_000,
      'firings after the death',
    );
    await f.client.schedules.pause('killed');
    const runs = await scheduledRuns(f.store, 'killed');
    expectEverySecondOnce(runs);
    // The frozen firing's due time is the first run, started once by both firings together.
    expect(runs[0]!.runId).toBe(frozenAt);
    for (const { runId } of runs) {
      await until(
        async () => (await f.store.runs.get(runId))?.status === 'completed',
        10_000,
        `run ${runId}`,
      );
      expect(ledger.count(runId)).toBe(1);
    }
  });

  it('a paused schedule starts nothing; resumed, it carries on at its next due time', async () => {
    const ledger = new Ledger();
    const workflow = tick(ledger);
    const f = (current = fleet({ workflows: [workflow], scheduleScanMs: 50 }));
    await f.spawn();
    const created = await f.client.schedules.create(
      workflow,
      { label: 'p' },
      { scheduleId: 'paused', every: '1s', paused: true },
    );
    expect(created).toMatchObject({ paused: true, revision: 1, overlap: 'skip' });
    await sleep(2_200);
    expect(await scheduledRuns(f.store, 'paused')).toEqual([]);
    expect(await f.client.schedules.resume('paused')).toBe(true);
    await until(
      async () => (await scheduledRuns(f.store, 'paused')).length >= 1,
      5_000,
      'a firing after resume',
    );
    const { schedules } = await f.client.schedules.list({ paused: false });
    expect(schedules.map((s) => s.scheduleId)).toEqual(['paused']);
    expect(await f.client.schedules.delete('paused')).toBe(true);
    await expect(f.client.schedules.get('paused')).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });
  });

  it('overlap skip starts no run while the previous one is going; queue-one starts one right after it', async () => {
    const ledger = new Ledger();
    // Each run takes 2.5 s, the schedule falls due every second.
    const workflow = tick(ledger, 2_500);
    const f = (current = fleet({ workflows: [workflow], scheduleScanMs: 50 }));
    await f.spawn();
    await f.client.schedules.create(
      workflow,
      { label: 's' },
      { scheduleId: 'skip', every: '1s', overlap: 'skip' },
    );
    await f.client.schedules.create(
      workflow,
      { label: 'q' },
      { scheduleId: 'queue', every: '1s', overlap: 'queue-one' },
    );
    await until(async () => (await scheduledRuns(f.store, 'skip')).length >= 2, 15_000, 'two skip firings');
    await until(async () => (await scheduledRuns(f.store, 'queue')).length >= 2, 15_000, 'two queue firings');
    await f.client.schedules.pause('skip');
    await f.client.schedules.pause('queue');
    for (const id of ['skip', 'queue']) {
      const runs = await scheduledRuns(f.store, id);
      // Never two runs of one schedule at once: each started after the one before had finished.
      for (let i = 1; i < runs.length; i++) {
        const before = await f.store.runs.get(runs[i - 1]!.runId);
        const next = await f.store.runs.get(runs[i]!.runId);
        expect(before?.status).toBe('completed');
        expect(next!.createdAt).toBeGreaterThanOrEqual(before!.updatedAt);
      }
    }
    const skip = await scheduledRuns(f.store, 'skip');
    const queue = await scheduledRuns(f.store, 'queue');
    // skip: the due times during a run were dropped, so the next run's due time came after it ended.
    expect(skip[1]!.dueAt - skip[0]!.dueAt).toBeGreaterThanOrEqual(2 * SECOND);
    // queue-one: the first due time during the run was kept and ran right after it.
    expect(queue[1]!.dueAt - queue[0]!.dueAt).toBe(SECOND);
  });
});
