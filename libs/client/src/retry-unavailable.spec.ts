/**
 * The client's retries through a briefly unavailable bus or store (retry-unavailable.ts): start,
 * signal, cancel, pause and resume against in-memory adapters that fail a few times with the
 * retryable error a NATS or Kafka leader election gives (a BackendUnavailableError, code
 * BATON_NATS_UNAVAILABLE or BATON_KAFKA_UNAVAILABLE; the transport packages are not imported here,
 * they depend on this one through @baton/testing).
 */
import { describe, expect, it } from 'vitest';
import { BatonError, ConfigError } from '@baton/core';
import type { Delivery, EnqueueOptions } from '@baton/core/adapter';
import { decodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { BackendPermissionError, BackendUnavailableError, Client, RetriesExhaustedError } from './index.js';

/** What a JetStream stream without a leader makes the NATS transport throw. */
function electionError(): BatonError {
  return new BackendUnavailableError('NATS stream BATON_RUNS has no leader (503)', {
    backend: 'nats',
    code: 'BATON_NATS_UNAVAILABLE',
    name: 'NatsUnavailableError',
  });
}

/** A bus whose next `failures` enqueues throw `error`; every attempt is recorded. */
function flakyBus(failures: number, error: () => Error = electionError) {
  const transport = memoryTransport();
  const attempts: { msgId: string | undefined; bytes: string }[] = [];
  const enqueue = transport.runQueue.enqueue.bind(transport);
  let left = failures;
  transport.runQueue.enqueue = async (data: Uint8Array, options?: EnqueueOptions) => {
    attempts.push({ msgId: options?.msgId, bytes: Buffer.from(data).toString('base64') });
    if (left > 0) {
      left -= 1;
      throw error();
    }
    return enqueue(data, options);
  };
  return { transport, attempts, fail: (n: number) => (left = n) };
}

async function drain(transport: ReturnType<typeof memoryTransport>): Promise<unknown[]> {
  const deliveries: Delivery[] = await transport.runQueue.fetch({ max: 100, expiresMs: 50 });
  for (const d of deliveries) await d.ack();
  return deliveries.map((d) => decodeMessage(d.data));
}

describe('client retries through a leader election', () => {
  it('start goes on through three unavailable answers, sending one run with one message id', async () => {
    const bus = flakyBus(3);
    const client = new Client({ transport: bus.transport });
    const run = await client.start({ name: 'orders', version: 1 }, { id: 7 }, { idempotencyKey: 'order-7' });
    expect(bus.attempts).toHaveLength(4);
    expect(new Set(bus.attempts.map((a) => a.msgId))).toEqual(new Set([`start:${run.runId}`]));
    expect(new Set(bus.attempts.map((a) => a.bytes)).size).toBe(1);
    expect(await drain(bus.transport)).toMatchObject([{ kind: 'start', runId: run.runId, input: { id: 7 } }]);
  });

  it('signal and cancel without a store retry the same message', async () => {
    const bus = flakyBus(0);
    const client = new Client({ transport: bus.transport });
    bus.fail(2);
    await client.signal('run-1', 'approval', { ok: true }, { signalId: 's-1' });
    expect(bus.attempts.map((a) => a.msgId)).toEqual([
      'signal:run-1:s-1',
      'signal:run-1:s-1',
      'signal:run-1:s-1',
    ]);
    bus.fail(2);
    await client.cancel('run-1', 'operator');
    expect(new Set(bus.attempts.slice(3).map((a) => a.bytes)).size).toBe(1);
    expect(await drain(bus.transport)).toMatchObject([
      { kind: 'signal', runId: 'run-1', name: 'approval', signalId: 's-1' },
      { kind: 'cancel', runId: 'run-1', reason: 'operator' },
    ]);
  });

  it('cancel, pause and resume retry a store that fails over', async () => {
    const store = memoryStore();
    const calls: string[] = [];
    let failing = 0;
    for (const method of ['requestCancel', 'requestPause', 'resume'] as const) {
      const real = store.control[method].bind(store.control) as (
        runId: string,
        reason?: string,
      ) => Promise<unknown>;
      (store.control as unknown as Record<string, unknown>)[method] = async (
        runId: string,
        reason?: string,
      ) => {
        calls.push(method);
        if (failing > 0) {
          failing -= 1;
          throw new BatonError('BATON_REDIS_UNAVAILABLE', 'READONLY the master is a replica now', {
            retryable: true,
          });
        }
        return real(runId, reason);
      };
    }
    const client = new Client({ transport: memoryTransport(), store });
    await store.runs.create({
      runId: 'run-1',
      workflow: 'orders',
      version: 1,
      input: null,
      idempotencyKey: null,
    });
    failing = 2;
    expect(await client.runs.pause('run-1', 'audit')).toBe('paused');
    failing = 2;
    expect(await client.runs.resume('run-1')).toBe(true);
    failing = 1;
    await client.cancel('run-1');
    expect((await store.leases.get('run-1'))?.cancelRequested).toBeTruthy();
    expect(calls).toEqual([
      ...['requestPause', 'requestPause', 'requestPause'],
      ...['resume', 'resume', 'resume'],
      ...['requestCancel', 'requestCancel'],
    ]);
  });

  it('an error that is not retryable fails at once, unchanged', async () => {
    const refused = new BackendPermissionError('publish to BATON_RUNS refused', {
      backend: 'nats',
      code: 'BATON_NATS_PERMISSION',
      resource: 'baton.runs',
    });
    const bus = flakyBus(5, () => refused);
    const client = new Client({ transport: bus.transport });
    // A producer catches the category from the client, whichever bus refused.
    const caught = await client.start({ name: 'orders', version: 1 }, null).catch((err: unknown) => err);
    expect(caught).toBe(refused);
    expect(caught).toBeInstanceOf(BackendPermissionError);
    expect(bus.attempts).toHaveLength(1);
  });

  it('past retryUnavailableMs fails naming the call, the attempts and the last error', async () => {
    const bus = flakyBus(Number.POSITIVE_INFINITY);
    const client = new Client({ transport: bus.transport, retryUnavailableMs: 300 });
    const err = await client.start({ name: 'orders', version: 1 }, null, { runId: 'run-9' }).catch((e) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect(err).toMatchObject({
      code: 'BATON_RETRIES_EXHAUSTED',
      retryable: true,
      operation: 'client.start(run run-9)',
    });
    expect(err.attempts).toBe(bus.attempts.length);
    expect(err.attempts).toBeGreaterThan(1);
    expect(err.cause).toMatchObject({ code: 'BATON_NATS_UNAVAILABLE' });
    expect(err.message).toMatch(
      new RegExp(
        `^client\\.start\\(run run-9\\) failed ${err.attempts} times over [0-9.]+ s, .*last error: BATON_NATS_UNAVAILABLE: NATS stream BATON_RUNS has no leader`,
      ),
    );
    // 0: one attempt, its own error.
    const once = flakyBus(Number.POSITIVE_INFINITY);
    const strict = new Client({ transport: once.transport, retryUnavailableMs: 0 });
    await expect(strict.start({ name: 'orders', version: 1 }, null)).rejects.toMatchObject({
      code: 'BATON_NATS_UNAVAILABLE',
    });
    expect(once.attempts).toHaveLength(1);
    expect(() => new Client({ transport: memoryTransport(), retryUnavailableMs: -1 })).toThrow(ConfigError);
  });
});
