/**
 * A restart of the server (a private nats-server with file storage, same port and data) loses
 * nothing and needs no action: operations during the outage fail with an error instead of
 * hanging, the client reconnects by itself, and afterwards run messages enqueued before the
 * restart are fetched, the journal is intact and every operation works again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery, Transport } from '@baton/core/adapter';
import { startPrivateNats, type PrivateServer } from '@baton/testing/servers';
import { natsTransport } from './index.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Retries `operation` until it succeeds (the client is reconnecting), for up to `withinMs`. */
async function eventually<T>(operation: () => Promise<T>, withinMs = 20_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await operation();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Fetches (and acks) until every expected text arrived, or `withinMs` passed; returns all it got. */
async function fetchUntil(transport: Transport, expected: string[], withinMs = 20_000): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  const received: Delivery[] = [];
  const texts = (): string[] => received.map((d) => decoder.decode(d.data));
  while (!expected.every((text) => texts().includes(text)) && Date.now() < deadline) {
    const batch = await transport.runQueue.fetch({ max: 10, expiresMs: 500 }).catch(() => []);
    for (const delivery of batch) await delivery.ack();
    received.push(...batch);
  }
  return texts();
}

describe('nats transport: server restart', { timeout: 60_000 }, () => {
  let server: PrivateServer;
  let transport: Transport;

  beforeAll(async () => {
    server = await startPrivateNats();
    transport = natsTransport({
      servers: server.url,
      prefix: 'restart',
      ackWaitMs: 2_000,
      requestTimeoutMs: 1_000,
    });
    await transport.connect();
  });

  afterAll(async () => {
    await transport?.close();
    await server?.dispose();
  });

  it('keeps queue and journal across a restart and works again once reconnected', async () => {
    await transport.runQueue.enqueue(encoder.encode('before-1'));
    await transport.runQueue.enqueue(encoder.encode('before-2'));
    const p1 = await transport.journal.append({
      runId: 'run-1',
      data: encoder.encode('r1'),
      expectedLastPosition: 0,
    });
    const p2 = await transport.journal.append({
      runId: 'run-1',
      data: encoder.encode('r2'),
      expectedLastPosition: p1,
    });

    await server.stop();
    await expect(transport.runQueue.enqueue(encoder.encode('during'))).rejects.toMatchObject({
      code: 'BATON_NATS_UNAVAILABLE',
      retryable: true,
    });
    expect(await transport.runQueue.fetch({ max: 1, expiresMs: 300 })).toEqual([]);
    await server.restart();

    await eventually(() => transport.runQueue.enqueue(encoder.encode('after')));
    // 'during' failed with a timeout, so it may or may not have reached the server: like any
    // enqueue that failed that way, the caller retries it (and msgId de-duplicates the retry).
    const fetched = await fetchUntil(transport, ['before-1', 'before-2', 'after']);
    expect(fetched.filter((text) => text !== 'during').sort()).toEqual(['after', 'before-1', 'before-2']);
    const records = await eventually(() => transport.journal.read('run-1', 0));
    expect(records.map((r) => [r.position, decoder.decode(r.data)])).toEqual([
      [p1, 'r1'],
      [p2, 'r2'],
    ]);
    const p3 = await transport.journal.append({
      runId: 'run-1',
      data: encoder.encode('r3'),
      expectedLastPosition: p2,
    });
    expect(p3).toBeGreaterThan(p2);
    await transport.deadLetters.add({ data: new Uint8Array(), headers: {}, reason: 'r', code: 'c', at: 1 });
    expect((await transport.deadLetters.list()).map((l) => l.code)).toEqual(['c']);
  });

  it('redelivers after a restart a message that was fetched but not acked before it', async () => {
    await transport.runQueue.enqueue(encoder.encode('in flight'));
    const [unacked] = await transport.runQueue.fetch({ max: 1, expiresMs: 2_000 });
    expect(unacked?.deliveryCount).toBe(1);
    await server.restart();
    const [again] = await eventually(async () => {
      const batch = await transport.runQueue.fetch({ max: 1, expiresMs: 1_000 });
      if (batch.length === 0) throw new Error('not redelivered yet');
      return batch;
    });
    expect(decoder.decode(again?.data ?? new Uint8Array())).toBe('in flight');
    expect(again?.deliveryCount).toBeGreaterThanOrEqual(2);
    await again?.ack();
  });

  it('ends a fetch in flight when the server shuts down, and closes promptly while it is down', async () => {
    const other = natsTransport({ servers: server.url, prefix: 'restart-close', requestTimeoutMs: 1_000 });
    await other.connect();
    const fetching = other.runQueue.fetch({ max: 1, expiresMs: 30_000 }).then(
      (batch) => ({ batch }),
      (error: unknown) => ({ error }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.stop();
    await other.close();
    // Either the server said it is shutting down (a retryable error) or close() ended the fetch.
    const outcome = await fetching;
    if ('error' in outcome) {
      expect(outcome.error).toMatchObject({ code: 'BATON_NATS_UNAVAILABLE', retryable: true });
      expect((outcome.error as Error).message).toContain('409 Server Shutdown');
    } else {
      expect(outcome.batch).toEqual([]);
    }
  });
});
