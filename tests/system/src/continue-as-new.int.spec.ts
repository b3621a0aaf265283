/**
 * Continue-as-new on the real adapters (NATS + Redis, Kafka + Postgres), with two real Workers in
 * this process: a chain of runs each continuing as the next completes with the last run's result
 * through the first run's handle; each run has a fresh journal on the bus (one step each); the
 * store links the chain both ways (the parent's result names the successor, the successor's
 * idempotency key its parent); every step ran once. The crash between sending the successor and
 * recording the end is driven on memory adapters (libs/worker/src/worker-continue-as-new.spec.ts).
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import {
  CONTINUED_AS,
  continuationKey,
  decodeJournalRecord,
  IDENTITY_PAYLOAD_CODEC,
  isContinuedAsNew,
} from '@baton/core/runtime';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

const executions = new Map<string, number>();
const step = defineActivity({
  name: 'can_int_step',
  run: async (n: number, io) => (
    executions.set(io.idempotencyKey, (executions.get(io.idempotencyKey) ?? 0) + 1),
    n + 1
  ),
});
const loop = defineWorkflow({
  name: 'can_int_loop',
  version: 1,
  run: async (ctx, input: { n: number; until: number }) => {
    const next = await ctx.run(step, input.n);
    return next < input.until ? ctx.continueAsNew({ n: next, until: input.until }) : { final: next };
  },
});

describe.each(PAIRS)('continue-as-new on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'can');

  it(
    'runs a chain of five runs to the last result, each with a fresh journal and each step once',
    { timeout: 60_000 },
    async () => {
      await startInProcessWorkers(ns, { workflows: [loop] });
      const run = await ns.client.start(loop, { n: 0, until: 5 });
      expect(await run.result({ timeoutMs: 30_000 })).toEqual({ final: 5 });

      const ids = [run.runId];
      for (;;) {
        const record = await ns.store.runs.get(ids.at(-1)!);
        expect(record?.status).toBe('completed');
        if (!isContinuedAsNew(record!.result)) break;
        ids.push(record!.result[CONTINUED_AS].runId);
      }
      expect(ids).toHaveLength(5);
      for (const [i, id] of ids.entries()) {
        if (i > 0) expect((await ns.store.runs.get(id))?.idempotencyKey).toBe(continuationKey(ids[i - 1]!));
        const entries = (await ns.journal.journal.read(id, 0)).flatMap((r) =>
          decodeJournalRecord(r.data, id, IDENTITY_PAYLOAD_CODEC, r.position),
        );
        expect(entries.filter((e) => e.type === 'ActivityCompleted')).toHaveLength(1);
        expect(executions.get(`${id}:0`)).toBe(1);
      }
      // The operator's view: the successors, found by their idempotency keys.
      const page = await ns.store.runs.list({ idempotencyKeyPrefix: 'continue-as-new:', limit: 100 });
      expect(page.runs.map((r) => r.runId).sort()).toEqual(ids.slice(1).sort());
    },
  );
});
