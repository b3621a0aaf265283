/**
 * Values with no JSON form, on memory adapters (the real adapters: apps/worker/src/
 * unencodable.int.spec.ts). An activity result fails its step once and the activity never runs
 * again; a workflow result, or a pipelined step's result the workflow has already seen, fails the
 * run once; the client refuses an input or a signal payload before anything is sent.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { ActivityFailedError } from '@baton/core';
import { defineActivity, defineWorkflow, UnencodableValueError, type ActivityDefinition } from '@baton/core';
import type { PayloadStore, Store, Transport } from '@baton/core/adapter';
import { decodeEntries, resolvePayloadProtection, type JournalEntry } from '@baton/core/runtime';
import { Client } from '@baton/client';
import type { Logger } from './logger.js';
import type { WorkerEvent } from './events.js';
import type { WorkerOptions } from './options.js';
import { fleet, Ledger, type Fleet } from './fleet.spec-helper.js';
import { withCapability } from './capabilities.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A circular object, as an ORM row or a DOM-like node would be. */
function circular(): Record<string, unknown> {
  const customer: Record<string, unknown> = { name: 'ada' };
  customer.self = customer;
  return { customer };
}

/** An activity returning `make()`, counting its executions in `ledger`. */
function returning(
  ledger: Ledger,
  name: string,
  make: () => unknown,
  options: Partial<ActivityDefinition<null, unknown>> = {},
): ActivityDefinition<null, unknown> {
  return defineActivity({
    name,
    run: async (_: null, io) => {
      ledger.record(io.idempotencyKey);
      return make();
    },
    ...options,
  });
}

async function journalOf(transport: Transport, runId: string): Promise<JournalEntry[]> {
  const records = await transport.journal.read(runId, 0);
  return records.flatMap((r) => decodeEntries(r.data, runId));
}

function claims(events: WorkerEvent[], runId: string): number {
  return events.filter((e) => e.type === 'run-claimed' && e.runId === runId).length;
}

async function oneWorker(
  workflows: WorkerOptions['workflows'],
  overrides: Partial<WorkerOptions> = {},
): Promise<{ f: Fleet; events: WorkerEvent[]; logger: ReturnType<typeof recordingLogger> }> {
  const logger = recordingLogger();
  const f = fleet({ workflows, logger });
  current = f;
  const worker = await f.spawn(overrides);
  return { f, events: worker.events, logger };
}

describe('values with no JSON form (memory adapters)', () => {
  it('fails the step of an activity returning a BigInt once: the activity runs once and the run fails with the typed error', async () => {
    const ledger = new Ledger();
    const charge = returning(ledger, 'charge_card', () => ({ amount: 10n }));
    const wf = defineWorkflow({ name: 'bigint_step', version: 1, run: (ctx) => ctx.run(charge, null) });
    const { f, events, logger } = await oneWorker([wf]);
    const run = await f.client.start(wf, null);

    const error = await run.result({ timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/activity charge_card \(step #0\) failed after 1 attempt/);
    expect((error as Error).message).toMatch(/a BigInt at \$\.amount/);
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    const journal = await journalOf(f.journal, run.runId);
    const failed = journal.find((e) => e.type === 'ActivityFailed');
    expect(failed).toMatchObject({
      seq: 0,
      name: 'charge_card',
      attempts: 1,
      error: { name: 'UnencodableValueError', code: 'BATON_UNENCODABLE', retryable: false },
    });
    expect(journal.some((e) => e.type === 'ActivityCompleted')).toBe(false);
    expect(await (f.store as Store).runs.get(run.runId)).toMatchObject({ status: 'failed' });
    const warned = logger.lines.filter((l) => l.level === 'warn' && l.obj.runId === run.runId);
    expect(warned).toEqual([
      expect.objectContaining({
        obj: expect.objectContaining({
          what: 'result of activity charge_card (step #0)',
          problem: 'a BigInt at $.amount',
        }),
      }),
    ]);
    // A step failure is the workflow's to handle: no dead letter.
    expect(await f.transport.deadLetters.list()).toEqual([]);
  });

  it('lets a workflow catch the failed step of a circular result and complete, the activity run once', async () => {
    const ledger = new Ledger();
    const load = returning(ledger, 'load_customer', circular);
    const after = returning(ledger, 'after', () => 'ok');
    const wf = defineWorkflow({
      name: 'circular_caught',
      version: 1,
      run: async (ctx) => {
        let caught: unknown;
        try {
          await ctx.run(load, null);
        } catch (err) {
          caught = err;
        }
        const cause = (caught as ActivityFailedError).cause as UnencodableValueError;
        return { caught: (caught as Error).name, cause: cause.code, then: await ctx.run(after, null) };
      },
    });
    const { f, events } = await oneWorker([wf]);
    const run = await f.client.start(wf, null);

    expect(await run.result({ timeoutMs: 5_000 })).toEqual({
      caught: 'ActivityFailedError',
      cause: 'BATON_UNENCODABLE',
      then: 'ok',
    });
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(ledger.count(`${run.runId}:1`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    const failed = (await journalOf(f.journal, run.runId)).find((e) => e.type === 'ActivityFailed');
    expect(failed).toMatchObject({
      error: {
        message: expect.stringContaining('a circular reference at $.customer.self (back to $.customer)'),
      },
    });
  });

  it('ends the step of a non-idempotent activity in the journal: ActivityStarted then ActivityFailed, one execution', async () => {
    const ledger = new Ledger();
    const pay = returning(ledger, 'pay', () => [1, { id: 2n }], { idempotent: false });
    const wf = defineWorkflow({ name: 'bigint_started', version: 1, run: (ctx) => ctx.run(pay, null) });
    const { f, events } = await oneWorker([wf]);
    const run = await f.client.start(wf, null);

    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(/a BigInt at \$\[1\]\.id/);
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    const steps = (await journalOf(f.journal, run.runId))
      .filter((e) => e.type.startsWith('Activity'))
      .map((e) => e.type);
    expect(steps).toEqual(['ActivityStarted', 'ActivityFailed']);
  });

  it('lands the good result of a parallel step while only the unencodable one fails', async () => {
    const ledger = new Ledger();
    const good = returning(ledger, 'good', () => 'fine');
    const bad = returning(ledger, 'bad', () => 3n);
    const wf = defineWorkflow({
      name: 'parallel_bad',
      version: 1,
      run: async (ctx) => {
        const [g, b] = await Promise.allSettled([ctx.run(good, null), ctx.run(bad, null)]);
        return [g.status, b.status];
      },
    });
    const { f, events } = await oneWorker([wf]);
    const run = await f.client.start(wf, null);

    expect(await run.result({ timeoutMs: 5_000 })).toEqual(['fulfilled', 'rejected']);
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(ledger.count(`${run.runId}:1`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    const outcomes = (await journalOf(f.journal, run.runId))
      .filter((e) => e.type === 'ActivityCompleted' || e.type === 'ActivityFailed')
      .map((e) => `${e.type}#${(e as { seq: number }).seq}`)
      .sort();
    expect(outcomes).toEqual(['ActivityCompleted#0', 'ActivityFailed#1']);
  });

  it('fails the step the same way with the hash chain on (the chain hashes before the codec encodes)', async () => {
    const ledger = new Ledger();
    const charge = returning(ledger, 'charge_card', () => ({ amount: 10n }));
    const wf = defineWorkflow({ name: 'bigint_chained', version: 1, run: (ctx) => ctx.run(charge, null) });
    const signingKeys = `s1:${randomBytes(32).toString('base64')}`;
    const { f, events } = await oneWorker([wf], {
      payloadProtection: resolvePayloadProtection({ signingKeys }),
    });
    const run = await f.client.start(wf, null);

    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(/a BigInt at \$\.amount/);
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
  });

  it('fails a run whose workflow returns a BigInt once, with the error and a dead letter', async () => {
    const ledger = new Ledger();
    const count = returning(ledger, 'count', () => 41);
    const wf = defineWorkflow({
      name: 'loan',
      version: 1,
      run: async (ctx) => ({ total: BigInt((await ctx.run(count, null)) as number) + 1n }),
    });
    const { f, events, logger } = await oneWorker([wf]);
    const run = await f.client.start(wf, null);

    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(
      /result of workflow loan@1 cannot be encoded as JSON: a BigInt at \$\.total/,
    );
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    expect(await (f.store as Store).runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { name: 'UnencodableValueError', code: 'BATON_UNENCODABLE' },
    });
    const terminal = (await journalOf(f.journal, run.runId)).filter((e) => e.type.startsWith('Run'));
    expect(terminal.map((e) => e.type)).toEqual(['RunFailed']);
    expect(await f.transport.deadLetters.list()).toEqual([
      expect.objectContaining({ code: 'unencodable', reason: expect.stringContaining(run.runId) }),
    ]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'run-failed', runId: run.runId }));
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        obj: expect.objectContaining({ runId: run.runId, problem: 'a BigInt at $.total' }),
      }),
    );
  });

  it('fails the run once when a pipelined step result the workflow already used cannot be encoded', async () => {
    const ledger = new Ledger();
    const fetchRate = returning(ledger, 'fetch_rate', () => ({ rate: 7n }));
    const wf = defineWorkflow({
      name: 'pipelined_bigint',
      version: 1,
      run: async (ctx) => {
        const { rate } = (await ctx.run(fetchRate, null)) as { rate: bigint };
        return rate.toString();
      },
    });
    const { f, events } = await oneWorker([wf], { pipelineSteps: true });
    const run = await f.client.start(wf, null);

    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(
      /result of activity fetch_rate \(step #0\) cannot be encoded as JSON: a BigInt at \$\.rate/,
    );
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(claims(events, run.runId)).toBe(1);
    const journal = await journalOf(f.journal, run.runId);
    expect(journal.filter((e) => e.type.startsWith('Run')).map((e) => e.type)).toEqual(['RunFailed']);
    expect(await (f.store as Store).runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'BATON_UNENCODABLE' },
    });
  });

  it('refuses an unencodable input or signal payload at the client, sending nothing', async () => {
    const wf = defineWorkflow({ name: 'never', version: 1, run: async () => 1 });
    const { f } = await oneWorker([wf]);
    const sent: unknown[] = [];
    const transport = withCapability(f.transport, 'runQueue', {
      enqueue: (...args: unknown[]) => (sent.push(args), Promise.resolve()),
    });
    const stored: string[] = [];
    const payloads: PayloadStore = {
      location: 'test',
      put: async (runId) => void stored.push(runId),
      get: async () => undefined,
      delete: async () => undefined,
    };
    const withRefs = new Client({
      transport,
      store: f.store,
      largePayloads: { thresholdBytes: 16, payloads },
    });
    const inline = new Client({ transport });

    for (const client of [withRefs, inline]) {
      const started = await client.start(wf, { amount: 1n }, { runId: 'r-input' }).catch((e: unknown) => e);
      expect(started).toBeInstanceOf(UnencodableValueError);
      expect(started).toMatchObject({
        what: 'input of run r-input (workflow never@1)',
        problem: 'a BigInt at $.amount',
      });
      const signalled = await client.signal('r-input', 'approve', circular()).catch((e: unknown) => e);
      expect(signalled).toBeInstanceOf(UnencodableValueError);
      expect(signalled).toMatchObject({
        what: "payload of signal 'approve' to run r-input",
        problem: 'a circular reference at $.customer.self (back to $.customer)',
      });
    }
    expect(sent).toEqual([]);
    expect(stored).toEqual([]);
  });
});
