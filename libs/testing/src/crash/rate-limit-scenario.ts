/**
 * Rate limits on real worker processes, a real bus and a real store: runs of `crash_limited` (a
 * crash chain whose every step attempt takes a place under one fleet-wide limit, LIMITED_RATE)
 * on three workers, while a worker with a step in flight is SIGKILLed twice. Checked from outside:
 * in the ledger's executions, no window of the limit's length (less a slack for the time between a
 * grant and the step's start, which the ledger records) holds more step starts than the limit,
 * however the kills moved the runs; the limit was reached (the steps did queue behind it); every
 * run completes with the right output; and the crash suite's invariants hold (each step applied
 * once, nothing re-executed after its completion was journaled, fencing).
 *
 * Each adapter pair calls it from its own spec: `describeRateLimitCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS } from './harness.js';
import { crashLimited, LIMITED_RATE, type ChainInput } from './crash-workflow.js';

const RUNS = 12;
const SHAPE = { steps: 4, minDelayMs: 50, maxDelayMs: 150 };
/**
 * A grant is made on the store's clock; the ledger records the step's start a little later, on the
 * worker's. Windows this much shorter than the limit's tolerate differences in that lag up to this
 * much. The exact count per window, on the store's clock, is the worker spec's
 * (libs/worker/src/worker-rate-limits.spec.ts); this scenario shows that kills, failovers and re-run
 * attempts do not get past the limit.
 */
const START_LAG_SLACK_MS = 150;

/** The most starts in any window of `windowMs` (a window [t, t + windowMs) opening at each start). */
export function mostStartsInWindow(starts: readonly number[], windowMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

export function describeRateLimitCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`rate limits on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      `never starts more than ${LIMITED_RATE.limit} limited steps per ${LIMITED_RATE.perMs} ms fleet-wide while workers are SIGKILLed, and completes every run once`,
      { timeout: 150_000 },
      async () => {
        world = await CrashWorld.create(factory);
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);

        for (let seed = 1; seed <= RUNS; seed++) {
          const input: ChainInput = { ...SHAPE, seed };
          const handle = await client.start(crashLimited, input, {
            idempotencyKey: `${w.ns}-limited-${seed}`,
          });
          w.runs.push({ runId: handle.runId, input });
        }

        // Twice, while runs remain: a worker with a limited step in flight.
        for (let kill = 0; kill < 2 && (kill === 0 || (await w.unfinished()).length > 0); kill++) {
          await w.killBusyWorker();
          await sleep(500);
        }

        await w.waitForAll(120_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        const starts = (await w.ledger.executions()).map((e) => e.startedAt);
        // Every attempt took a place: the first ones, and those re-run after a kill.
        expect(starts.length).toBeGreaterThanOrEqual(RUNS * SHAPE.steps);
        const most = mostStartsInWindow(starts, LIMITED_RATE.perMs - START_LAG_SLACK_MS);
        console.log(
          `[crash suite] ${name} rate limits: ${starts.length} step starts, at most ${most} in any ${LIMITED_RATE.perMs - START_LAG_SLACK_MS} ms`,
        );
        expect(most).toBeLessThanOrEqual(LIMITED_RATE.limit);
        // The limit was reached: without it, three workers would start every run's step at once.
        expect(mostStartsInWindow(starts, LIMITED_RATE.perMs + START_LAG_SLACK_MS)).toBeGreaterThanOrEqual(
          LIMITED_RATE.limit,
        );
      },
    );
  });
}
