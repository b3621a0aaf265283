/**
 * Schedules on real worker processes, a real bus and a real store: a schedule falling due every
 * second is fired by whichever worker holds the schedule scan's turn. That worker is SIGKILLed at
 * a random moment of the period after one of its firings (around its next one), twice, and
 * then the whole fleet is killed for a few seconds. Checked from outside: every due time from the
 * first to the last has exactly one run (its id and idempotency key come from the schedule and the
 * due time, so a doubled due time would show as a run executed twice, a skipped one as a gap); the
 * catch-up (`missed: 'run'`) starts the due times missed while no worker ran; and the ledger shows
 * every step of every run applied once.
 *
 * Each adapter pair calls it from its own spec: `describeScheduleCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import type { Store } from '@baton/core/adapter';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS, pollUntil } from './harness.js';
import { crashChain, type ChainInput } from './crash-workflow.js';
import type { WorkerProcess } from './worker-processes.js';

const SCHEDULE_ID = 'every-second';
/** How long the whole fleet stays down: several due times are missed. */
const FLEET_DOWN_MS = 4_000;

/** The schedule's runs in the store, by due time (from their idempotency keys), oldest first. */
export async function scheduledRuns(
  store: Store,
  scheduleId: string,
): Promise<{ dueAt: number; runId: string }[]> {
  const prefix = `schedule:${scheduleId}:`;
  const page = await store.runs.list({ idempotencyKeyPrefix: prefix, limit: 1_000 });
  return page.runs
    .map((r) => ({ dueAt: Date.parse(r.idempotencyKey!.slice(prefix.length)), runId: r.runId }))
    .sort((a, b) => a.dueAt - b.dueAt);
}

function firings(p: WorkerProcess): number {
  return p.logs.filter((l) => l.msg === 'schedule fired').length;
}

export function describeScheduleCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`schedules on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'fires every due time exactly once while the firing worker is SIGKILLed, and catches up after the whole fleet was down',
      { timeout: 150_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: { BATON_SCHEDULE_SCAN_MS: '200', BATON_LEASE_MS: '2000', BATON_HEARTBEAT_MS: '500' },
        });
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);
        const input: ChainInput = { seed: 7, steps: 2, minDelayMs: 20, maxDelayMs: 60 };
        await client.schedules.create(crashChain, input, {
          scheduleId: SCHEDULE_ID,
          every: '1s',
          overlap: 'allow',
          catchup: { missed: 'run', limit: 20, graceMs: 1_500 },
        });

        const replacements: Promise<WorkerProcess>[] = [];
        for (let kill = 0; kill < 2; kill++) {
          const seen = new Map(w.fleet.alive.map((p) => [p, firings(p)]));
          let firer: WorkerProcess | undefined;
          await pollUntil(
            async () => {
              firer = w.fleet.alive.find((p) => firings(p) > (seen.get(p) ?? 0));
              return firer !== undefined;
            },
            30_000,
            () => `a firing\n${w.fleet.describe()}`,
          );
          // Around its next firing: the turn holder fires again about a period (1 s) later.
          await sleep(Math.floor(Math.random() * 1_000));
          firer!.signal('SIGKILL');
          await firer!.exited;
          // The others go on meanwhile: the replacement joins while the next firing is awaited.
          replacements.push(w.fleet.spawn());
        }
        await Promise.all(replacements);

        // The whole fleet down: the due times meanwhile are missed, and caught up afterwards.
        const down = w.fleet.alive;
        w.fleet.killAllNow();
        await Promise.all(down.map((p) => p.exited));
        await sleep(FLEET_DOWN_MS);
        const backAt = Date.now();
        await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
        await pollUntil(
          // The schedule moved on past them (not only their runs started): the firing is complete.
          async () => ((await w.env.store.schedules.get(SCHEDULE_ID))?.lastDueAt ?? 0) >= backAt + 1_000,
          60_000,
          () => `firings after the fleet came back\n${w.fleet.describe()}`,
        );
        await client.schedules.pause(SCHEDULE_ID);
        // A firing that read the schedule before the pause may still add its due time.
        await sleep(1_000);

        const runs = await scheduledRuns(w.env.store, SCHEDULE_ID);
        const dueTimes = runs.map((r) => r.dueAt);
        expect(new Set(dueTimes).size).toBe(dueTimes.length);
        const gaps = dueTimes.slice(1).filter((t, i) => t - dueTimes[i]! !== 1_000);
        expect(gaps.map((t) => new Date(t).toISOString())).toEqual([]);
        // The downtime's due times are there: started by the catch-up.
        expect(
          dueTimes.filter((t) => t > backAt - FLEET_DOWN_MS && t < backAt).length,
        ).toBeGreaterThanOrEqual(3);
        const fired = w.fleet.all.flatMap((p) =>
          p.logs
            .filter((l) => l.msg === 'schedule fired')
            .map((l) => `${p.name} ${String(l.time)} ${JSON.stringify(l.dueTimes)}`),
        );
        expect(
          w.fleet.all.some((p) =>
            p.logs.some((l) => l.msg === 'schedule fired' && Array.isArray(l.runIds) && l.runIds.length > 1),
          ),
          `one firing caught up several due times; back at ${new Date(backAt).toISOString()}, firings:\n${fired.join('\n')}\n${w.fleet.describe()}`,
        ).toBe(true);

        w.runs.push(...runs.map(({ runId }) => ({ runId, input })));
        await w.waitForAll(60_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
      },
    );
  });
}
