/**
 * client.update addressed to a run that continued as new (update-call.ts, invariant 4), against the
 * in-memory store and bus with no worker (the store's side is played by hand: the marks, the ends,
 * the settles): the request goes along the chain to the live run once each run on the way has
 * recorded its end, sealed for the run that keeps it; a wait goes on at the successor of a run that
 * ended while the request was pending; a chain longer than the bound is refused. With a worker:
 * libs/worker/src/worker-continue-as-new-carry.spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RunStateError } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import {
  CONTINUED_AS,
  MAX_CONTINUATION_HOPS,
  openValue,
  resolvePayloadProtection,
  sealValue,
} from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from './index.js';

const protection = resolvePayloadProtection(
  { encryptionKeys: `k1:${randomBytes(32).toString('base64')}` },
  {},
);

function world() {
  const store = memoryStore();
  const client = new Client({ transport: memoryTransport(), store, payloadProtection: protection });
  return { store, client };
}

/** A run held by a worker, at the epoch returned. */
async function heldRun(store: Store, runId: string): Promise<number> {
  await store.runs.create({ runId, workflow: 'loop', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-a', 60_000);
  if (!lease.ok) throw new Error(`${runId} not acquired`);
  return lease.epoch;
}

/** Marks `runId` as continuing as `successor` and, unless `finish` is false, records its end. */
async function continueRun(store: Store, runId: string, epoch: number, successor: string, finish = true) {
  await store.runs.continueAs(runId, epoch, successor);
  if (!finish) return;
  const result = { [CONTINUED_AS]: { runId: successor, workflow: 'loop', version: 1, input: null } };
  await store.runs.finish(runId, epoch, { status: 'completed', result });
}

/** Settles `runId`'s pending request `updateId` with the arguments doubled, as a handler would. */
async function answerWhenAsked(store: Store, runId: string, epoch: number, updateId: string) {
  for (;;) {
    const [request] = await store.updates.pending(runId);
    if (request?.updateId === updateId) {
      const n = openValue(request.args, runId, 'update args', protection) as number;
      await store.updates.settle(runId, epoch, {
        updateId,
        name: request.name,
        outcome: { status: 'completed', result: n * 2 },
      });
      return;
    }
    await sleep(10);
  }
}

describe('client.update along a continue-as-new chain', () => {
  it('goes on to the live run, the arguments sealed for it, once each run before has recorded its end', async () => {
    const { store, client } = world();
    const first = await heldRun(store, 'run-1');
    await continueRun(store, 'run-1', first, 'run-2');
    const second = await heldRun(store, 'run-2');
    // run-2 is handing over: the request waits until its end is recorded.
    await continueRun(store, 'run-2', second, 'run-3', false);
    const asked = client.update('run-1', 'double', 21, { updateId: 'u1', timeoutMs: 5_000 });
    await sleep(100);
    const third = await heldRun(store, 'run-3');
    await store.runs.finish('run-2', second, {
      status: 'completed',
      result: { [CONTINUED_AS]: { runId: 'run-3', workflow: 'loop', version: 1, input: null } },
    });
    await answerWhenAsked(store, 'run-3', third, 'u1');
    expect(await asked).toBe(42);
    expect(await store.updates.pending('run-1')).toEqual([]);
    expect(await store.updates.pending('run-2')).toEqual([]);
  });

  it('waits on at the successor when the run it asked ends having carried the request over', async () => {
    const { store, client } = world();
    const first = await heldRun(store, 'run-a');
    const asked = client.update('run-a', 'double', 5, { updateId: 'u2', timeoutMs: 10_000 });
    await (async () => {
      while ((await store.updates.pending('run-a')).length === 0) await sleep(10);
    })();
    // The owner carries the request to the successor (as the worker's carry-over does) and ends.
    await continueRun(store, 'run-a', first, 'run-b', false);
    const second = await heldRun(store, 'run-b');
    const [pending] = await store.updates.pending('run-a');
    const plain = openValue(pending!.args, 'run-a', 'update args', protection);
    await store.updates.request('run-b', {
      updateId: 'u2',
      name: 'double',
      args: sealValue(plain, 'run-b', 'update args', protection),
    });
    await store.runs.finish('run-a', first, {
      status: 'completed',
      result: { [CONTINUED_AS]: { runId: 'run-b', workflow: 'loop', version: 1, input: null } },
    });
    await answerWhenAsked(store, 'run-b', second, 'u2');
    expect(await asked).toBe(10);
  });

  it(`refuses a chain of more than ${MAX_CONTINUATION_HOPS} continuations, naming the run asked`, async () => {
    const { store, client } = world();
    const ids = Array.from({ length: MAX_CONTINUATION_HOPS + 2 }, (_, i) => `long-${i}`);
    for (const [i, runId] of ids.entries()) {
      const epoch = await heldRun(store, runId);
      if (i + 1 < ids.length) await continueRun(store, runId, epoch, ids[i + 1]!);
    }
    const asked = client.update('long-0', 'double', 1, { timeoutMs: 5_000 });
    await expect(asked).rejects.toBeInstanceOf(RunStateError);
    await expect(asked).rejects.toThrow(/long-0 continued as new more than 100 times/);
    expect(await store.updates.pending(ids.at(-1)!)).toEqual([]);
  });
});
