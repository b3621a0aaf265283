/**
 * Schedules on the real adapters, with two real Workers in this process (their scans race through
 * the store's compare-and-set, as a fleet's do): on NATS + Redis and Kafka + Postgres,
 * - the overlap policies hold: `skip` drops the due times that fall during a run, `queue-one` keeps
 *   the first of them and starts it right after, and neither ever has two runs of one schedule at
 *   once;
 * - `allow` starts every due time, runs overlapping;
 * - every due time starts at most one run (one idempotency key per due time), and an update of the
 *   timing moves the due times from then on.
 * The memory-adapter spec (libs/worker/src/worker-schedules.spec.ts) covers the same rules with a
 * worker cut off mid-firing; crash-schedules.fleet.int.spec.ts SIGKILLs the firing worker process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];
const SECOND = 1_000;

const slowTick = defineActivity({
  name: 'sched_slow_tick',
  run: async (input: { ms: number }, io) => {
    await sleep(input.ms, undefined, { signal: io.signal }).catch(() => undefined);
    return io.runId;
  },
});
const tick = defineWorkflow({
  name: 'sched_tick',
  version: 1,
  run: async (ctx, input: { ms: number }) => ctx.run(slowTick, input),
});

interface ScheduledRun {
  dueAt: number;
  runId: string;
  createdAt: number;
  updatedAt: number;
  status: string;
}

/** The schedule's runs in the store, by due time (from their idempotency keys), oldest first. */
async function scheduledRuns(store: Store, scheduleId: string): Promise<ScheduledRun[]> {
  const prefix = `schedule:${scheduleId}:`;
  const page = await store.runs.list({ idempotencyKeyPrefix: prefix, limit: 1_000 });
  return page.runs
    .map((r) => ({
      dueAt: Date.parse(r.idempotencyKey!.slice(prefix.length)),
      runId: r.runId,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      status: r.status,
    }))
    .sort((a, b) => a.dueAt - b.dueAt);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

describe.each(PAIRS)('schedules on $name, two workers in this process', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'sc');

  const startWorkers = () => startInProcessWorkers(ns, { workflows: [tick], scheduleScanMs: 100 });

  it(
    'skip drops due times during a run, queue-one keeps one and starts it right after, allow overlaps',
    { timeout: 90_000 },
    async () => {
      await startWorkers();
      // Each run takes 2.5 s; the schedules fall due every second.
      const input = { ms: 2_500 };
      for (const overlap of ['skip', 'queue-one', 'allow'] as const)
        await ns.client.schedules.create(tick, input, { scheduleId: `o-${overlap}`, every: '1s', overlap });
      await until('three runs of each schedule', async () => {
        for (const overlap of ['skip', 'queue-one', 'allow'])
          if ((await scheduledRuns(ns.store, `o-${overlap}`)).length < 3) return false;
        return true;
      });
      for (const overlap of ['skip', 'queue-one', 'allow']) await ns.client.schedules.pause(`o-${overlap}`);
      // Let every started run finish, so each one's end is on record.
      await until('every scheduled run finished', async () => {
        for (const overlap of ['skip', 'queue-one', 'allow'])
          if ((await scheduledRuns(ns.store, `o-${overlap}`)).some((r) => r.status !== 'completed'))
            return false;
        return true;
      });

      for (const overlap of ['skip', 'queue-one'] as const) {
        const runs = await scheduledRuns(ns.store, `o-${overlap}`);
        // Never two runs of one schedule at once: each started after the one before had finished.
        for (let i = 1; i < runs.length; i++)
          expect(runs[i]!.createdAt, `${overlap} run ${i}`).toBeGreaterThanOrEqual(runs[i - 1]!.updatedAt);
      }
      const skip = await scheduledRuns(ns.store, 'o-skip');
      const queue = await scheduledRuns(ns.store, 'o-queue-one');
      const allow = await scheduledRuns(ns.store, 'o-allow');
      // skip: the due times during a run were dropped, so the next due time came after it ended.
      for (let i = 1; i < skip.length; i++)
        expect(skip[i]!.dueAt - skip[i - 1]!.dueAt).toBeGreaterThanOrEqual(2 * SECOND);
      // queue-one: the first due time during the run was kept and ran right after it.
      expect(queue[1]!.dueAt - queue[0]!.dueAt).toBe(SECOND);
      // allow: every due time ran, one run each, overlapping (a run began before the one before ended).
      for (let i = 1; i < allow.length; i++) expect(allow[i]!.dueAt - allow[i - 1]!.dueAt).toBe(SECOND);
      expect(allow.some((r, i) => i > 0 && r.createdAt < allow[i - 1]!.updatedAt)).toBe(true);
      for (const runs of [skip, queue, allow])
        expect(new Set(runs.map((r) => r.dueAt)).size).toBe(runs.length);
    },
  );

  it(
    'an update of the timing moves the due times from then on; each starts one run',
    { timeout: 60_000 },
    async () => {
      await startWorkers();
      await ns.client.schedules.create(tick, { ms: 0 }, { scheduleId: 'u', every: '1s' });
      await until('two runs every second', async () => (await scheduledRuns(ns.store, 'u')).length >= 2);
      const updated = await ns.client.schedules.update('u', { every: '2s' });
      expect(updated.revision).toBeGreaterThan(1);
      const since = (await scheduledRuns(ns.store, 'u')).length;
      await until(
        'two runs after the update',
        async () => (await scheduledRuns(ns.store, 'u')).length >= since + 2,
      );
      await ns.client.schedules.pause('u');
      const runs = await scheduledRuns(ns.store, 'u');
      const after = runs.filter((r) => r.dueAt >= updated.updatedAt);
      expect(after.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < after.length; i++) expect(after[i]!.dueAt - after[i - 1]!.dueAt).toBe(2 * SECOND);
      expect(new Set(runs.map((r) => r.dueAt)).size).toBe(runs.length);
    },
  );
});
