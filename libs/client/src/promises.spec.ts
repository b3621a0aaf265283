/**
 * client.promises against the in-memory store and bus, with no worker (promises.ts has the
 * invariants): unknown and malformed tokens refused alike, the value checked against the promise's
 * JSON Schema before anything is stored, a repeat answered as the first, a different completion,
 * one after the timeout and one after the run's end refused, a suspended run woken, the delivery
 * sealed for its run when the client encrypts. What the workflow does with a completion is the
 * executor's (core's promises.spec.ts); a whole run through the bus is the system spec's.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError, RunStateError } from '@baton/core';
import type { Delivery, Store } from '@baton/core/adapter';
import { decodeMessage, isSealedValue, resolvePayloadProtection } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const TOKEN = `bp_${'a'.repeat(32)}`;

function world(options: { encrypt?: boolean } = {}) {
  const transport = memoryTransport();
  const store = memoryStore();
  const payloadProtection = options.encrypt
    ? resolvePayloadProtection({ encryptionKeys: `k1:${randomBytes(32).toString('base64')}` }, {})
    : undefined;
  const client = new Client({ transport, store, ...(payloadProtection && { payloadProtection }) });
  return { transport, store, client };
}

/** A run a worker holds (or, `suspended`, one waiting for a completion) with a promise at step 3. */
async function promised(
  store: Store,
  runId: string,
  options: { suspended?: boolean; schema?: Record<string, unknown>; token?: string } = {},
): Promise<string> {
  const token = options.token ?? TOKEN;
  await store.runs.create({ runId, workflow: 'approval', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-a', 60_000);
  if (!lease.ok) throw new Error('not acquired');
  await store.promises.create({
    token,
    runId,
    seq: 3,
    timeoutAt: null,
    ...(options.schema !== undefined && { schema: options.schema }),
  });
  if (options.suspended) {
    const request = {
      runId,
      epoch: lease.epoch,
      wakeAt: null,
      signals: ['baton.promise'],
      consumedSignalIds: [],
    };
    expect(await store.leases.suspend(request)).toEqual({ ok: true });
  }
  return token;
}

async function drain(transport: ReturnType<typeof memoryTransport>): Promise<unknown[]> {
  const deliveries: Delivery[] = await transport.runQueue.fetch({ max: 100, expiresMs: 50 });
  for (const d of deliveries) await d.ack();
  return deliveries.map((d) => decodeMessage(d.data));
}

describe('client.promises', () => {
  it('refuses a token nobody made and a string that is no token alike, without echoing it', async () => {
    const { client } = world();
    for (const token of [TOKEN, 'not-a-token', `bp_${'b'.repeat(32)}/../x`]) {
      const refused = client.promises.resolve(token, 1);
      await expect(refused).rejects.toBeInstanceOf(NotFoundError);
      await expect(refused).rejects.toThrow('client.promises.resolve: no durable promise has this token');
      await expect(refused).rejects.not.toThrow(token);
    }
    await expect(client.promises.reject('nope', 'x')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.promises.get(TOKEN)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('resolves once: the delivery in the run’s inbox, a repeat answered as the first, another value refused', async () => {
    const { store, client, transport } = world();
    const token = await promised(store, 'run-1');
    expect(await client.promises.resolve(token, { approved: true, by: 'ann' })).toEqual({
      state: 'resolved',
    });
    expect(await store.signals.read('run-1')).toEqual([
      {
        signalId: 'baton.promise:3',
        name: 'baton.promise',
        payload: { token, outcome: 'resolved', value: { approved: true, by: 'ann' } },
        receivedAt: expect.any(Number),
      },
    ]);
    expect(await drain(transport)).toEqual([]); // held by its worker: nothing to wake
    // The same value, its keys in another order: the same answer, nothing changed.
    expect(await client.promises.resolve(token, { by: 'ann', approved: true })).toEqual({
      state: 'resolved',
    });
    const differing = client.promises.resolve(token, { approved: false });
    await expect(differing).rejects.toBeInstanceOf(RunStateError);
    await expect(differing).rejects.toThrow(
      /already resolved at .* with another value; a promise completes once/,
    );
    await expect(client.promises.reject(token, 'too late')).rejects.toThrow(/already resolved/);
    expect(await store.signals.read('run-1')).toHaveLength(1);
    expect(await client.promises.get(token)).toMatchObject({ state: 'resolved', runId: 'run-1', seq: 3 });
  });

  it('rejects with the error’s name, message and code (no stack); the same rejection repeats', async () => {
    const { store, client } = world();
    const token = await promised(store, 'run-2');
    const declined = Object.assign(new TypeError('declined by the bank'), { code: 'CARD_DECLINED' });
    expect(await client.promises.reject(token, declined)).toEqual({ state: 'rejected' });
    const [entry] = await store.signals.read('run-2');
    expect(entry?.payload).toEqual({
      token,
      outcome: 'rejected',
      error: { name: 'TypeError', message: 'declined by the bank', code: 'CARD_DECLINED' },
    });
    expect(
      await client.promises.reject(token, {
        name: 'TypeError',
        message: 'declined by the bank',
        code: 'CARD_DECLINED',
      }),
    ).toEqual({
      state: 'rejected',
    });
    await expect(client.promises.reject(token, 'something else')).rejects.toThrow(/already rejected/);
  });

  it("checks the value against the promise's JSON Schema and stores nothing it refuses", async () => {
    const { store, client } = world();
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { approved: { type: 'boolean' }, items: { type: 'array', items: { type: 'string' } } },
      required: ['approved'],
    };
    const token = await promised(store, 'run-3', { schema });
    const refused = client.promises.resolve(token, { approved: 'yes', items: ['a', 2] });
    await expect(refused).rejects.toBeInstanceOf(InvalidInputError);
    await expect(refused).rejects.toMatchObject({
      field: 'value',
      issues: ['$.approved: must be boolean', '$.items[1]: must be string'],
    });
    expect(await client.promises.get(token)).toMatchObject({ state: 'pending' });
    expect(await store.signals.read('run-3')).toEqual([]);
    expect(await client.promises.resolve(token, { approved: true, items: ['a'] })).toEqual({
      state: 'resolved',
    });
  });

  it('wakes a run suspended waiting for its completion with a wake message', async () => {
    const { store, client, transport } = world();
    const token = await promised(store, 'run-4', { suspended: true });
    expect(await client.promises.resolve(token, 42)).toEqual({ state: 'resolved' });
    expect(await drain(transport)).toEqual([{ kind: 'wake', runId: 'run-4', reason: 'signal' }]);
    expect(await store.leases.get('run-4')).toMatchObject({ state: 'held', owner: null });
  });

  it('refuses a promise that timed out and one whose run finished, saying which', async () => {
    const { store, client } = world();
    const token = await promised(store, 'run-5');
    await store.promises.expire(token);
    await expect(client.promises.resolve(token, 1)).rejects.toThrow(
      /timed out at .*can no longer be completed/,
    );

    const other = `bp_${'c'.repeat(32)}`;
    await promised(store, 'run-6', { token: other });
    const lease = await store.leases.get('run-6');
    await store.runs.finish(
      'run-6',
      lease!.epoch,
      { status: 'completed', result: 1 },
      {
        runId: 'run-6',
        seq: 1,
        epoch: lease!.epoch,
        journalPosition: 0,
        entries: [],
        status: 'completed',
        schemaVersion: 1,
        createdAt: Date.now(),
      },
    );
    const finished = client.promises.resolve(other, 1);
    await expect(finished).rejects.toBeInstanceOf(RunStateError);
    await expect(finished).rejects.toThrow(/the run that made this promise has finished/);
  });

  it('seals the delivery for its run when the client encrypts, and still recognises a repeat', async () => {
    const { store, client } = world({ encrypt: true });
    const token = await promised(store, 'run-7');
    expect(await client.promises.resolve(token, { secret: 'pin 1234' })).toEqual({ state: 'resolved' });
    const [entry] = await store.signals.read('run-7');
    expect(isSealedValue(entry?.payload)).toBe(true);
    expect(JSON.stringify(await store.promises.get(token))).not.toContain('pin 1234');
    expect(await client.promises.resolve(token, { secret: 'pin 1234' })).toEqual({ state: 'resolved' });
    await expect(client.promises.resolve(token, { secret: 'pin 9999' })).rejects.toThrow(/another value/);
  });

  it("lists a run's pending promises with their tokens, for an operator", async () => {
    const { store, client } = world();
    const token = await promised(store, 'run-8');
    const done = `bp_${'d'.repeat(32)}`;
    await store.promises.create({ token: done, runId: 'run-8', seq: 5, timeoutAt: null });
    await client.promises.resolve(done, 'ok');
    expect(await client.promises.pending('run-8')).toEqual([
      { token, runId: 'run-8', seq: 3, state: 'pending', timeoutAt: null, createdAt: expect.any(Number) },
    ]);
  });

  it('refuses a signal under the name completions use', async () => {
    const { store, client } = world();
    await promised(store, 'run-9');
    await expect(
      client.signal('run-9', 'baton.promise', { token: TOKEN, outcome: 'resolved', value: 1 }),
    ).rejects.toThrow(/reserved for the completions of durable promises/);
  });
});
