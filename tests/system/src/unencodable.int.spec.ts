/**
 * Values with no JSON form on the real adapters (NATS + Redis, Kafka + Postgres), with two real
 * Workers in this process. A ledger outside the workers counts each activity's executions:
 * - an activity returning a BigInt or a circular object runs exactly once; its step fails with
 *   BATON_UNENCODABLE, the run fails (or completes when the workflow catches the failure), and
 *   it is claimed once (epoch 1, one attempt): no claim/abort/hand-off loop;
 * - a workflow returning a BigInt fails its run once, with a dead letter `unencodable`;
 * - the client refuses an input with a BigInt before anything reaches the bus.
 */
import { describe, expect, it } from 'vitest';
import {
  defineActivity,
  defineWorkflow,
  UnencodableValueError,
  type AnyWorkflowDefinition,
} from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { decodeJournalRecord, IDENTITY_PAYLOAD_CODEC, type JournalEntry } from '@baton/core/runtime';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

/** Executions per idempotency key: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executed = (key: string): number => executions.get(key) ?? 0;
const record = (key: string): void => void executions.set(key, executed(key) + 1);

const chargeCard = defineActivity({
  name: 'ue_charge_card',
  idempotent: false,
  run: async (_: null, io) => (record(io.idempotencyKey), { amount: 1999n, currency: 'EUR' }),
});
const loadCustomer = defineActivity({
  name: 'ue_load_customer',
  run: async (_: null, io) => {
    record(io.idempotencyKey);
    const customer: Record<string, unknown> = { name: 'ada' };
    customer.self = customer;
    return { customer };
  },
});
const count = defineActivity({
  name: 'ue_count',
  run: async (_: null, io) => (record(io.idempotencyKey), 41),
});

const charge = defineWorkflow({ name: 'ue_charge', version: 1, run: (ctx) => ctx.run(chargeCard, null) });
const tolerant = defineWorkflow({
  name: 'ue_tolerant',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.run(loadCustomer, null);
      return 'loaded';
    } catch (err) {
      return `fallback after ${(err as Error & { cause?: { code?: string } }).cause?.code}`;
    }
  },
});
const loan = defineWorkflow({
  name: 'ue_loan',
  version: 1,
  run: async (ctx) => ({ total: BigInt((await ctx.run(count, null)) as number) + 1n }),
});
const WORKFLOWS: AnyWorkflowDefinition[] = [charge, tolerant, loan];

describe.each(PAIRS)('values with no JSON form on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'ue');

  const startWorkers = () =>
    startInProcessWorkers(ns, { workflows: WORKFLOWS, reapIntervalMs: 100, inProcessWaitMs: 0 });

  async function journal(runId: string): Promise<JournalEntry[]> {
    const records = await ns.journal.journal.read(runId, 0);
    return records.flatMap((r) => decodeJournalRecord(r.data, runId, IDENTITY_PAYLOAD_CODEC, r.position));
  }

  /** Claimed once: one attempt, the lease never moved past epoch 1. */
  async function expectClaimedOnce(store: Store, runId: string): Promise<void> {
    expect((await store.runs.get(runId))?.attempts).toBe(1);
    expect((await store.leases.get(runId))?.epoch).toBe(1);
  }

  it('runs an activity returning a BigInt once and fails its step and run with BATON_UNENCODABLE', async () => {
    await startWorkers();
    const run = await ns.client.start(charge, null);
    await expect(run.result({ timeoutMs: 30_000 })).rejects.toThrow(
      /ue_charge_card \(step #0\) cannot be encoded as JSON: a BigInt at \$\.amount/,
    );
    expect(executed(`${run.runId}:0`)).toBe(1);
    await expectClaimedOnce(ns.store, run.runId);
    const entries = await journal(run.runId);
    const steps = entries.filter((e) => e.type.startsWith('Activity') || e.type.startsWith('Run'));
    expect(steps.map((e) => e.type)).toEqual(['ActivityStarted', 'ActivityFailed', 'RunFailed']);
    expect(steps[1]).toMatchObject({ error: { code: 'BATON_UNENCODABLE' } });
    expect(await ns.store.runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { name: 'ActivityFailedError', cause: { code: 'BATON_UNENCODABLE' } },
    });
  }, 60_000);

  it('runs an activity returning a circular object once and lets the workflow that catches it complete', async () => {
    await startWorkers();
    const run = await ns.client.start(tolerant, null);
    expect(await run.result({ timeoutMs: 30_000 })).toBe('fallback after BATON_UNENCODABLE');
    expect(executed(`${run.runId}:0`)).toBe(1);
    await expectClaimedOnce(ns.store, run.runId);
    const failed = (await journal(run.runId)).find((e) => e.type === 'ActivityFailed');
    expect(failed).toMatchObject({
      error: { message: expect.stringContaining('a circular reference at $.customer.self') },
    });
  }, 60_000);

  it('fails a run whose workflow returns a BigInt once, with a dead letter naming it', async () => {
    await startWorkers();
    const run = await ns.client.start(loan, null);
    await expect(run.result({ timeoutMs: 30_000 })).rejects.toThrow(
      /result of workflow ue_loan@1 cannot be encoded as JSON: a BigInt at \$\.total/,
    );
    expect(executed(`${run.runId}:0`)).toBe(1);
    await expectClaimedOnce(ns.store, run.runId);
    expect(await ns.store.runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { name: 'UnencodableValueError', code: 'BATON_UNENCODABLE' },
    });
    const letters = await ns.transport.deadLetters.list();
    expect(letters).toContainEqual(
      expect.objectContaining({ code: 'unencodable', reason: expect.stringContaining(run.runId) }),
    );
  }, 60_000);

  it('refuses an input with a BigInt at the client: no run is created', async () => {
    const refused = await ns.client
      .start(charge, { cents: 5n }, { runId: 'ue-refused' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnencodableValueError);
    expect((refused as UnencodableValueError).problem).toBe('a BigInt at $.cents');
    await startWorkers();
    // Had the refused start been sent, a worker would have created its run before a later one finished.
    const after = await ns.client.start(tolerant, null);
    await after.result({ timeoutMs: 30_000 });
    expect(await ns.store.runs.get('ue-refused')).toBeUndefined();
  }, 60_000);
});
