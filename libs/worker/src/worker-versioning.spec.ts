/**
 * Workflow versions across a fleet (memory adapters): a worker that lacks a run's workflow version
 * puts the run back for one that has it, and never fails or dead-letters it for that.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import type { Delivery, FetchOptions, Transport } from '@baton/core/adapter';
import { encodeMessage } from '@baton/core/runtime';
import { withCapability } from './capabilities.spec-helper.js';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import type { Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const v1 = defineWorkflow({
  name: 'order',
  version: 1,
  run: async (ctx) => `v1:${await ctx.waitForSignal<string>('go')}`,
});
const v2 = defineWorkflow({ name: 'order', version: 2, run: async () => 'v2' });

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const noop = (): void => undefined;
  return { warnings, debug: noop, info: noop, error: noop, warn: (_obj, msg) => warnings.push(msg ?? '') };
}

/** Starts a v1 run on a v1 worker, lets it suspend, and stops that worker. */
async function suspendedV1Run(f: Fleet): Promise<string> {
  const a = await f.spawn({ workflows: [v1] });
  const run = await f.client.start(v1, null);
  await until(() => a.events.some((e) => e.type === 'run-suspended'), 5_000, 'the v1 run to suspend');
  await a.worker.stop();
  return run.runId;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A transport whose deliveries all look like their tenth (past the put-back naks at once). */
function inflatedCounts(answers: Array<{ count: number; answer: 'ack' | 'nak' }>) {
  return (transport: Transport): Transport =>
    withCapability(transport, 'runQueue', {
      fetch: async (options: FetchOptions): Promise<Delivery[]> =>
        (await transport.runQueue.fetch(options)).map((d) => {
          const count = d.deliveryCount + 9;
          return {
            ...d,
            deliveryCount: count,
            ack: () => (answers.push({ count, answer: 'ack' }), d.ack()),
            nak: (ms?: number) => (answers.push({ count, answer: 'nak' }), d.nak(ms)),
          };
        }),
    });
}

describe('workflow versions in a mixed fleet (memory adapters)', () => {
  it('puts a run of a version it lacks back, never failing or dead-lettering it, until a worker with the version completes it', async () => {
    current = fleet({ workflows: [v1] });
    const runId = await suspendedV1Run(current);
    const logger = capturingLogger();
    const b = await current.spawn({ workflows: [v2], maxDeliveries: 2, logger });
    await current.client.signal(runId, 'go', 'ok');
    // Past maxDeliveries several times over (put-backs after 200, 400, 800 ms, ...).
    await sleep(1_800);
    expect(await current.transport.deadLetters.list()).toEqual([]);
    expect((await current.store.runs.get(runId))?.status).not.toBe('failed');
    expect(b.events.filter((e) => e.type === 'run-failed' || e.type === 'dead-lettered')).toEqual([]);
    const about = logger.warnings.filter((w) => w.includes('order@1'));
    expect(about).toHaveLength(1); // rate-limited: one warning per version and minute
    expect(about[0]).toContain(`run ${runId} needs workflow order@1`);
    expect(about[0]).toContain('it has: order@2');

    // The v2 worker keeps working meanwhile.
    const other = await current.client.start(v2, null);
    expect(await other.result({ timeoutMs: 5_000 })).toBe('v2');

    await current.spawn({ workflows: [v1] });
    expect(await current.client.handle(runId).result({ timeoutMs: 10_000 })).toBe('v1:ok');
    expect(await current.transport.deadLetters.list()).toEqual([]);
  });

  it('dead-letters a start for a version no worker registers when no run record exists, naming it', async () => {
    current = fleet({ workflows: [v2] });
    await current.spawn({ missingVersionGraceMs: 0 });
    await current.transport.runQueue.enqueue(
      encodeMessage({
        kind: 'start',
        runId: 'r-v3',
        workflow: 'order',
        version: 3,
        input: null,
        enqueuedAt: 0,
      }),
    );
    await until(
      async () => (await current!.transport.deadLetters.list()).length === 1,
      5_000,
      'a dead letter',
    );
    const [letter] = await current.transport.deadLetters.list();
    expect(letter).toMatchObject({ code: 'unknown-workflow' });
    expect(letter!.reason).toMatch(/workflow order@3 is not registered on this worker \(it has: order@2\)/);
    expect(await current.store.runs.get('r-v3')).toBeUndefined();
  });

  it('puts back a start whose run record a worker with the version already created', async () => {
    current = fleet({ workflows: [v2] });
    await current.spawn({ maxDeliveries: 2 });
    const start = { runId: 'r-v1', workflow: 'order', version: 1, input: null };
    await current.store.runs.create({ ...start, idempotencyKey: null, traceparent: null });
    await current.transport.runQueue.enqueue(encodeMessage({ kind: 'start', ...start, enqueuedAt: 0 }));
    await sleep(1_000);
    expect(await current.transport.deadLetters.list()).toEqual([]);
    await current.spawn({ workflows: [v1] });
    await current.client.signal('r-v1', 'go', 'late');
    expect(await current.client.handle('r-v1').result({ timeoutMs: 10_000 })).toBe('v1:late');
  });

  it('drops a much-redelivered copy when the reaper re-sends the run anyway, and the run still completes', async () => {
    const answers: Array<{ count: number; answer: 'ack' | 'nak' }> = [];
    current = fleet({ workflows: [v1] }, inflatedCounts(answers));
    const runId = await suspendedV1Run(current);
    answers.length = 0;
    await current.spawn({ workflows: [v2], maxDeliveries: 2 });
    await current.client.signal(runId, 'go', 'ok');
    await until(() => answers.some((a) => a.answer === 'ack'), 5_000, 'a dropped copy');
    expect(answers.filter((a) => a.answer === 'nak')).toEqual([]);
    await sleep(800); // the reaper re-sends it every lease period (400 ms here)
    expect(await current.transport.deadLetters.list()).toEqual([]);
    await current.spawn({ workflows: [v1] });
    expect(await current.client.handle(runId).result({ timeoutMs: 10_000 })).toBe('v1:ok');
  });

  it('never drops the message of a run that has no lease, however often it was put back', async () => {
    const answers: Array<{ count: number; answer: 'ack' | 'nak' }> = [];
    current = fleet({ workflows: [v2] }, inflatedCounts(answers));
    await current.spawn();
    const start = { runId: 'r-unleased', workflow: 'order', version: 1, input: null };
    await current.store.runs.create({ ...start, idempotencyKey: null, traceparent: null });
    await current.transport.runQueue.enqueue(encodeMessage({ kind: 'start', ...start, enqueuedAt: 0 }));
    await until(() => answers.length >= 1, 5_000, 'a put-back');
    // The tenth delivery of a run without a lease: put back (for 30 s, the cap), not dropped.
    expect(answers).toEqual([{ count: 10, answer: 'nak' }]);
    expect(await current.store.runs.get('r-unleased')).toMatchObject({ workflow: 'order', version: 1 });
    expect(await current.transport.deadLetters.list()).toEqual([]);
  });
});
