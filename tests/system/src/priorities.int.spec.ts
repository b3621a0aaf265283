/**
 * Run priorities on the real adapters (NATS + Redis, Kafka + Postgres, Redis + Redis), with a real Worker in this
 * process: a backlog of low-priority runs is enqueued first, high-priority runs after it, then one
 * worker claiming one run at a time starts. The high runs complete first (by the order the runs'
 * single activity ran, recorded from the outside), and every low run still completes: the claim
 * cycle gives the low lane one claim in eight while high work waits (docs/priorities.md).
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { RunPriority } from '@baton/client';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats', { BATON_NATS_PRIORITY_LANES: 'true' }) },
  {
    name: 'kafka+postgres',
    factory: crashEnvironment('postgres', 'kafka', { BATON_KAFKA_PRIORITY_LANES: 'true' }),
  },
  {
    name: 'redis+redis',
    factory: crashEnvironment('redis', 'redis', { BATON_REDIS_BUS_PRIORITY_LANES: 'true' }),
  },
];

const LOWS = 12;
const HIGHS = 6;

/** The runs' labels in the order their activity ran, per namespace. */
const ran = new Map<string, string[]>();
const note = defineActivity({
  name: 'prio_int_note',
  run: async (input: { ns: string; label: string }) => {
    ran.set(input.ns, [...(ran.get(input.ns) ?? []), input.label]);
    return input.label;
  },
});
const job = defineWorkflow({
  name: 'prio_int_job',
  version: 1,
  run: async (ctx, input: { ns: string; label: string }) => ctx.run(note, input),
});

describe.each(PAIRS)('run priorities on $name', ({ name, factory }) => {
  const ns = inProcessNamespace(factory, 'prio');

  it(
    'completes the high-priority runs before the low backlog they were enqueued behind, and every low one',
    { timeout: 120_000 },
    async () => {
      const start = (priority: RunPriority, label: string) =>
        ns.client.start(job, { ns: name, label }, { priority });
      const lows = [];
      for (let i = 0; i < LOWS; i++) lows.push(await start('low', `low-${i}`));
      const highs = [];
      for (let i = 0; i < HIGHS; i++) highs.push(await start('high', `high-${i}`));

      // One worker, one run at a time: every claim is a choice between the lanes.
      await startInProcessWorkers(ns, { workflows: [job], concurrency: 1 }, 1);
      for (const run of [...highs, ...lows]) await run.result({ timeoutMs: 90_000 });

      const order = ran.get(name) ?? [];
      // Every run completed, each activity once.
      expect(order).toHaveLength(LOWS + HIGHS);
      expect(new Set(order).size).toBe(LOWS + HIGHS);
      // All six high runs among the first nine completions: the cycle gives at most one low claim
      // in the first eight, and a bus that reads its lanes in the background (Kafka) may hand the
      // worker's very first claim to whichever lane it had read first.
      const lastHigh = Math.max(...order.flatMap((label, i) => (label.startsWith('high') ? [i] : [])));
      expect(lastHigh).toBeLessThan(HIGHS + 3);
    },
  );
});
