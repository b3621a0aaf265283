/**
 * The worker crash suite with group commit across runs (BATON_JOURNAL=group), on NATS + Redis and
 * Kafka + Redis: every worker puts the steps of many runs into one record of its own log (a NATS
 * subject; a key of the Kafka group topic) and records each run's pointer in Redis, fenced by
 * expected position. The same scenarios and invariants as every other pair (SIGKILL mid-step,
 * zombies frozen past their lease, bus and store outages): the journal a resume reads is the
 * pointers the store accepted, so a fenced worker's entries are never replayed.
 */
import { describe, expect, it } from 'vitest';
import { CrashWorld, describeCrashSuite, type CrashSuiteOptions } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { NO_VIOLATIONS } from './cluster-workload.spec-helper.js';

const BUSES: Array<{ bus: 'nats' | 'kafka'; outages: CrashSuiteOptions['outages'] }> = [
  { bus: 'nats', outages: ['nats', 'redis'] },
  // The suite restarts private NATS and Redis servers only; the Kafka broker is shared.
  { bus: 'kafka', outages: ['redis'] },
];

for (const { bus, outages } of BUSES) {
  const GROUP = crashEnvironment('redis', bus, { BATON_JOURNAL: 'group' });

  describeCrashSuite(`${bus}+redis, group journal`, GROUP, { outages });

  describe(`group journal on ${bus}+redis`, () => {
    it(
      'journals every run through pointers in the store, none on a journal of its own',
      { timeout: 90_000 },
      async () => {
        const w = await CrashWorld.create(GROUP);
        try {
          await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
          await w.enqueue(30, { steps: 5, minDelayMs: 10, maxDelayMs: 40 });
          await w.waitForAll(60_000);
          expect(await w.violations()).toEqual(NO_VIOLATIONS);
          const index = w.env.store.journalIndex!;
          for (const { runId } of w.runs) {
            const { grouped, pointers } = await index.readPointers(runId, 0);
            expect({ runId, grouped }).toEqual({ runId, grouped: true });
            expect(pointers.length).toBeGreaterThan(0);
          }
        } finally {
          await w.dispose();
        }
      },
    );
  });
}
