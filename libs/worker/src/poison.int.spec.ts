/**
 * Messages no store can keep are refused at decode, before any store call: poison at once
 * (dead-lettered `unparseable` on the first delivery), never a store error retried until
 * maxDeliveries. On the real Redis store, whose Lua JSON stops at 1000 levels.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { encodeJson, MAX_MESSAGE_DEPTH } from '@baton/core/runtime';
import { memoryTransport } from '@baton/core/memory';
import { purgeRedisKeyPrefix, redisStore } from '@baton/store-redis';
import { redisTestUrl } from '@baton/testing/servers';
import { deleteRedisTransportKeys, redisTransport } from '@baton/transport-redis';
import { Worker } from './index.js';
import { FAST, until } from './fleet.spec-helper.js';

const keyPrefix = `poison-${randomUUID()}:`;
const busPrefix = `poison${randomUUID().slice(0, 8)}`;
const stores: Store[] = [];
const workers: Worker[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.close()));
  await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix });
  await deleteRedisTransportKeys({ url: redisTestUrl(), prefix: busPrefix });
});

describe('poison at decode (redis store)', () => {
  it('dead-letters a start message nested 200,000 levels deep on its first delivery, and one whose idempotencyKey is an object', async () => {
    const transport = memoryTransport({ ackWaitMs: 1_000 });
    const store = redisStore({ url: redisTestUrl(), keyPrefix });
    stores.push(store);
    const wf = defineWorkflow({ name: 'ok', version: 1, run: async () => 'fine' });
    const worker = new Worker({ ...FAST, transport, store, workflows: [wf], maxDeliveries: 5 });
    workers.push(worker);
    await worker.start();

    const depth = 200_000;
    const deepId = `deep-${randomUUID()}`;
    await transport.runQueue.enqueue(
      new TextEncoder().encode(
        `{"v":1,"kind":"start","runId":"${deepId}","workflow":"ok","version":1,"enqueuedAt":0,` +
          `"input":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      ),
    );
    const keyedId = `keyed-${randomUUID()}`;
    await transport.runQueue.enqueue(
      encodeJson({
        v: 1,
        kind: 'start',
        runId: keyedId,
        workflow: 'ok',
        version: 1,
        enqueuedAt: 0,
        idempotencyKey: { order: 1 },
      }),
    );
    const client = new Client({ transport, store });
    const good = await client.start(wf, null);
    expect(await good.result({ timeoutMs: 5_000 })).toBe('fine');

    await until(async () => (await transport.deadLetters.list()).length === 2, 5_000, 'two dead letters');
    const letters = await transport.deadLetters.list();
    expect(letters.map((l) => l.code)).toEqual(['unparseable', 'unparseable']);
    expect(letters.map((l) => l.reason).sort()).toEqual([
      `start message field 'idempotencyKey' must be a string or null when present; found an object`,
      `start message nests ${depth + 1} levels deep; the limit of a run message is ${MAX_MESSAGE_DEPTH} ` +
        '(no store can keep deeper values): flatten the input or payload',
    ]);
    // Refused before any store call: neither run exists.
    expect(await store.runs.get(deepId)).toBeUndefined();
    expect(await store.runs.get(keyedId)).toBeUndefined();
  });
});

describe('start fields the client refuses (redis bus and store)', () => {
  it('dead-letters a hand-made start with version 0, an empty idempotency key or a name no worker can register, naming the field, and keeps working', async () => {
    const transport = redisTransport({
      url: redisTestUrl(),
      prefix: busPrefix,
      ackWaitMs: 2_000,
      pollMs: 20,
    });
    const store = redisStore({ url: redisTestUrl(), keyPrefix });
    stores.push(store);
    const wf = defineWorkflow({ name: 'ok', version: 1, run: async () => 'fine' });
    const worker = new Worker({ ...FAST, transport, store, workflows: [wf], maxDeliveries: 5 });
    workers.push(worker);
    await worker.start();
    try {
      const start = { v: 1, kind: 'start', workflow: 'ok', version: 1, enqueuedAt: 0, input: null };
      const ids = [`v0-${randomUUID()}`, `empty-${randomUUID()}`, `name-${randomUUID()}`];
      // Sent with the raw transport, as a producer that is not Baton's client would.
      await transport.runQueue.enqueue(encodeJson({ ...start, runId: ids[0], version: 0 }));
      await transport.runQueue.enqueue(encodeJson({ ...start, runId: ids[1], idempotencyKey: '' }));
      await transport.runQueue.enqueue(encodeJson({ ...start, runId: ids[2], workflow: 'ok@1' }));
      const client = new Client({ transport, store });
      expect(await (await client.start(wf, null)).result({ timeoutMs: 10_000 })).toBe('fine');

      await until(
        async () => (await transport.deadLetters.list()).length === 3,
        10_000,
        'three dead letters',
      );
      const letters = await transport.deadLetters.list();
      // At once (the first delivery), not after the unknown-workflow grace or maxDeliveries.
      expect(letters.map((l) => l.code)).toEqual(['unparseable', 'unparseable', 'unparseable']);
      expect(letters.map((l) => l.reason).sort()).toEqual([
        `start message field 'idempotencyKey' must be a non-empty string when given; found ""`,
        `start message field 'version' must be a positive integer (what defineWorkflow accepts); found 0`,
        `start message field 'workflow' must be 1-128 characters from letters, digits, '_', '.', ':' and '-' ` +
          `(what defineWorkflow accepts); found "ok@1"`,
      ]);
      for (const id of ids) expect(await store.runs.get(id)).toBeUndefined();
      // The client refuses each of them before sending.
      await expect(client.start({ name: 'ok', version: 0 }, null)).rejects.toMatchObject({
        field: 'version',
      });
      await expect(client.start(wf, null, { idempotencyKey: '' })).rejects.toMatchObject({
        field: 'idempotencyKey',
      });
      await expect(client.start({ name: 'ok@1', version: 1 }, null)).rejects.toMatchObject({
        field: 'workflow',
      });
    } finally {
      await worker.stop();
      await transport.close();
    }
  });
});
