/**
 * Group commit across runs on Kafka + Redis, with worker processes. Redis groups new runs by
 * default, so crash-kafka-redis.int.spec.ts already runs the whole crash suite in group mode (as
 * crash-nats-redis.int.spec.ts does for NATS); this spec checks, with the mode set explicitly, that
 * every run of a fleet is journaled through pointers in the store (its records on the topic
 * `<prefix>.journal.groups`), and runs the suite's Redis restart in group mode too (the shared Kafka
 * broker is never restarted by a test).
 */
import { describe, expect, it } from 'vitest';
import { CrashWorld, describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { NO_VIOLATIONS } from './cluster-workload.spec-helper.js';

const GROUP = crashEnvironment('redis', 'kafka', { BATON_JOURNAL: 'group' });

describeCrashSuite('kafka+redis, group journal', GROUP, { outages: ['redis'] });

describe('group journal on kafka+redis', () => {
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
