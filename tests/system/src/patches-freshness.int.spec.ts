/**
 * Changing workflows in place and fresh results, on the real adapters (NATS + Redis,
 * NATS + Postgres, Kafka + Redis), with real Workers in this process:
 * - ctx.patched(): a run recorded by the old code past the patch resumes on a worker with the new
 *   code and follows the old branch (no NonDeterminismError, the new step never runs for it); a
 *   run started on the new code takes the new branch and journals a PatchMarker;
 * - maxAgeMs: a run resumed after its idempotent step's result aged past maxAgeMs runs the step
 *   again (same idempotency key, `refreshed: true` in the journal) and continues with the new
 *   result; a run resumed in time replays the old one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@baton/client';
import { defineActivity, defineWorkflow, type AnyWorkflowDefinition } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { decodeJournalRecord, IDENTITY_PAYLOAD_CODEC, type JournalEntry } from '@baton/core/runtime';
import { Worker } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

/** Long enough that a run signalled at once resumes well inside it, even on a loaded machine. */
const MAX_AGE_MS = 5_000;

/** Executions per idempotency key: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executed = (key: string): number => executions.get(key) ?? 0;
const record = (key: string): number => {
  executions.set(key, executed(key) + 1);
  return executed(key);
};

const first = defineActivity({ name: 'pf_first', run: async (_: null, io) => record(io.idempotencyKey) });
const extra = defineActivity({ name: 'pf_extra', run: async (_: null, io) => record(io.idempotencyKey) });
const last = defineActivity({ name: 'pf_last', run: async (_: null, io) => record(io.idempotencyKey) });

/** The code as first deployed: first, wait for `go`, last. */
const oldCode = defineWorkflow({
  name: 'pf_patched',
  version: 1,
  run: async (ctx) => {
    await ctx.run(first, null);
    await ctx.waitForSignal('go');
    await ctx.run(last, null);
    return 'old-branch';
  },
});
/** The same version, changed in place: new runs also run `extra` after `first`. */
const newCode = defineWorkflow({
  name: 'pf_patched',
  version: 1,
  run: async (ctx) => {
    await ctx.run(first, null);
    const patched = ctx.patched('extra-step');
    if (patched) await ctx.run(extra, null);
    await ctx.waitForSignal('go');
    await ctx.run(last, null);
    return patched ? 'new-branch' : 'old-branch';
  },
});

/** A quote whose result goes stale: each execution returns its count for the key. */
const quote = defineActivity({
  name: 'pf_quote',
  maxAgeMs: MAX_AGE_MS,
  run: async (_: null, io) => `quote-${record(io.idempotencyKey)}`,
});
const fresh = defineWorkflow({
  name: 'pf_fresh',
  version: 1,
  run: async (ctx) => {
    const q = await ctx.run(quote, null);
    await ctx.waitForSignal('go');
    return q;
  },
});

describe.each(IN_PROCESS_PAIRS)('patches and freshness on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'pf');
  let transport: Transport;
  let store: Store;
  let client: Client;
  beforeAll(() => {
    ({ transport, store, client } = ns);
  });

  async function startWorker(workflows: AnyWorkflowDefinition[]): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows,
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
    });
    await worker.start();
    ns.workers.push(worker);
    return worker;
  }

  async function stopWorkers(): Promise<void> {
    await Promise.all(ns.workers.splice(0).map((w) => w.stop()));
  }

  async function suspended(runId: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while ((await store.runs.get(runId))?.status !== 'suspended') {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${runId} to suspend`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async function journal(runId: string): Promise<JournalEntry[]> {
    const records = await ns.journal.journal.read(runId, 0);
    return records.flatMap((r) => decodeJournalRecord(r.data, runId, IDENTITY_PAYLOAD_CODEC, r.position));
  }

  it('resumes an old run on the patched code along the old branch, and starts new runs on the new one', async () => {
    await startWorker([oldCode]);
    const old = await client.start(oldCode, null);
    await suspended(old.runId);
    await stopWorkers();

    await startWorker([newCode]);
    await client.signal(old.runId, 'go');
    await expect(old.result({ timeoutMs: 20_000 })).resolves.toBe('old-branch');
    // Old journal: first #0, wait #1, last #2; the patch took no step number.
    expect(executed(`${old.runId}:0`)).toBe(1);
    expect(executed(`${old.runId}:2`)).toBe(1);
    expect([...executions.keys()].some((k) => k.startsWith(old.runId) && k.endsWith(':1'))).toBe(false);
    expect((await journal(old.runId)).some((e) => e.type === 'PatchMarker')).toBe(false);

    const fresh = await client.start(newCode, null);
    await suspended(fresh.runId);
    await client.signal(fresh.runId, 'go');
    await expect(fresh.result({ timeoutMs: 20_000 })).resolves.toBe('new-branch');
    // New journal: first #0, extra #1, wait #2, last #3.
    expect(executed(`${fresh.runId}:1`)).toBe(1);
    expect(executed(`${fresh.runId}:3`)).toBe(1);
    expect((await journal(fresh.runId)).find((e) => e.type === 'PatchMarker')).toMatchObject({
      changeId: 'extra-step',
      atSeq: 1,
    });
  }, 60_000);

  it('runs an idempotent step again when its result aged past maxAgeMs, and replays it when it did not', async () => {
    await startWorker([fresh]);
    const stale = await client.start(fresh, null);
    const timely = await client.start(fresh, null);
    await suspended(stale.runId);
    await suspended(timely.runId);
    await client.signal(timely.runId, 'go');
    await expect(timely.result({ timeoutMs: 20_000 })).resolves.toBe('quote-1');
    expect(executed(`${timely.runId}:0`)).toBe(1);

    await new Promise((r) => setTimeout(r, MAX_AGE_MS + 500));
    await client.signal(stale.runId, 'go');
    await expect(stale.result({ timeoutMs: 20_000 })).resolves.toBe('quote-2');
    expect(executed(`${stale.runId}:0`)).toBe(2);
    const completions = (await journal(stale.runId)).filter((e) => e.type === 'ActivityCompleted');
    expect(completions).toEqual([
      expect.objectContaining({ seq: 0, result: 'quote-1' }),
      expect.objectContaining({ seq: 0, result: 'quote-2', refreshed: true }),
    ]);
  }, 60_000);
});
