/**
 * Group commit across runs on Kafka + Redis, with worker processes. Redis groups new runs by
 * default, so crash-kafka-redis.int.spec.ts runs the whole crash suite in group mode (as
 * crash-nats-redis.int.spec.ts does for NATS); this spec checks that a fleet left to the default
 * does group: every run is journaled through pointers in the store (its records on the topic
 * `<prefix>.journal.groups`).
 */
import { describe, expect, it } from 'vitest';
import { CrashWorld } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { NO_VIOLATIONS } from './cluster-workload.spec-helper.js';

const DEFAULT = crashEnvironment('redis', 'kafka');

describe('group journal on kafka+redis, the default', () => {
  it(
    'journals every run through pointers in the store, none on a journal of its own',
    { timeout: 90_000 },
    async () => {
      const w = await CrashWorld.create(DEFAULT);
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
