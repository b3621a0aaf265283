import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow, PayloadTooLargeError } from '@baton/core';
import type { GroupLog, JournalAppend, Store, Transport } from '@baton/core/adapter';
import { withCapability } from './capabilities.spec-helper.js';
import { fleet, Ledger, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/**
 * A bus that, like NATS with its max_payload, refuses records above `limit` bytes: a run's own
 * journal records and group records alike.
 */
function limitedTransport(limit: number) {
  const tooLarge = (what: string, data: Uint8Array) =>
    Promise.reject(new PayloadTooLargeError(what, data.byteLength, limit));
  return (transport: Transport): Transport => {
    const groupLog = transport.groupLog!;
    const limitedGroupLog: GroupLog = {
      appendGroupRecord: (log, data) =>
        data.byteLength > limit ? tooLarge('group record', data) : groupLog.appendGroupRecord(log, data),
      readGroupRecords: (log, positions) => groupLog.readGroupRecords(log, positions),
      trimGroupLog: (log, before) => groupLog.trimGroupLog(log, before),
    };
    const limitedJournal = withCapability(transport, 'journal', {
      append: (append: JournalAppend) =>
        append.data.byteLength > limit
          ? tooLarge('journal record', append.data)
          : transport.journal.append(append),
    });
    return new Proxy(limitedJournal, {
      get: (target, prop, receiver) =>
        prop === 'groupLog' ? limitedGroupLog : Reflect.get(target, prop, receiver),
    });
  };
}

describe('worker limits (memory adapters)', () => {
  it('fails a run whose activity result the bus will never accept, dead-letters the reason, and never re-runs it', async () => {
    const ledger = new Ledger();
    const huge = defineActivity({
      name: 'huge',
      run: async (_: null, io) => {
        ledger.record(io.idempotencyKey);
        return 'x'.repeat(10_000);
      },
    });
    const wf = defineWorkflow({ name: 'huge1', version: 1, run: (ctx) => ctx.run(huge, null) });
    current = fleet({ workflows: [wf] }, limitedTransport(4_096));
    await current.spawn();
    await current.spawn();
    const run = await current.client.start(wf, null);
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(/above the bus's limit of 4096 bytes/);

    const record = await (current.store as Store).runs.get(run.runId);
    expect(record).toMatchObject({ status: 'failed', error: { name: 'PayloadTooLargeError' } });
    const letters = await current.transport.deadLetters.list();
    expect(letters).toEqual([
      expect.objectContaining({ code: 'too-large', reason: expect.stringContaining(run.runId) }),
    ]);
    await new Promise((r) => setTimeout(r, 600));
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
  });
});
