/**
 * connect() creates streams and the consumer idempotently, on the shared server: workers starting
 * together share one consumer, prefixes keep installations apart, an unusable existing stream is
 * named, and only explicit settings change what exists.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import type { Delivery, Transport } from '@baton/core/adapter';
import { natsTestUrl } from '@baton/testing/servers';
import { deleteNatsStreams, layoutFor, natsTransport, type NatsTransportOptions } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(natsTestUrl());
afterAll(() => prefixes.cleanUp());

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function transportFor(prefix: string, options: NatsTransportOptions = {}): Transport {
  return natsTransport({ servers: natsTestUrl(), prefix, storage: 'memory', ...options });
}

async function withManager<T>(work: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: natsTestUrl() });
  try {
    return await work(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

/** Fetches from both transports until `count` messages arrived; acks them. */
async function drainBoth(a: Transport, b: Transport, count: number): Promise<[Delivery[], Delivery[]]> {
  const got: [Delivery[], Delivery[]] = [[], []];
  const deadline = Date.now() + 10_000;
  while (got[0].length + got[1].length < count && Date.now() < deadline) {
    const [fromA, fromB] = await Promise.all([
      a.runQueue.fetch({ max: 2, expiresMs: 300 }),
      b.runQueue.fetch({ max: 2, expiresMs: 300 }),
    ]);
    for (const d of [...fromA, ...fromB]) await d.ack();
    got[0].push(...fromA);
    got[1].push(...fromB);
  }
  return got;
}

describe('nats transport: setup', () => {
  it('lets two workers with the same prefix connect at once and compete for one queue', async () => {
    const prefix = prefixes.next();
    const [a, b] = [transportFor(prefix), transportFor(prefix)];
    try {
      await Promise.all([a.connect(), b.connect()]);
      const labels = Array.from({ length: 12 }, (_, i) => `m${i}`);
      for (const label of labels) await a.runQueue.enqueue(encoder.encode(label));
      const [fromA, fromB] = await drainBoth(a, b, labels.length);
      const all = [...fromA, ...fromB].map((d) => decoder.decode(d.data));
      expect(all.sort()).toEqual([...labels].sort());
      expect(new Set(all).size).toBe(labels.length);
      const consumers = await withManager(async (jsm) => {
        const names: string[] = [];
        for await (const info of jsm.consumers.list(layoutFor(prefix).runsStream)) names.push(info.name);
        return names;
      });
      expect(consumers).toEqual([`${prefix}-workers`]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('keeps transports with different prefixes apart', async () => {
    const [a, b] = [transportFor(prefixes.next()), transportFor(prefixes.next())];
    try {
      await Promise.all([a.connect(), b.connect()]);
      await a.runQueue.enqueue(encoder.encode('for a'));
      await a.journal.append({ runId: 'shared-run', data: encoder.encode('a1') });
      await a.deadLetters.add({ data: new Uint8Array(), headers: {}, reason: 'r', code: 'c', at: 1 });
      expect(await b.runQueue.fetch({ max: 5, expiresMs: 200 })).toEqual([]);
      expect(await b.journal.read('shared-run', 0)).toEqual([]);
      expect(await b.deadLetters.list()).toEqual([]);
      expect(
        (await a.runQueue.fetch({ max: 5, expiresMs: 2_000 })).map((d) => decoder.decode(d.data)),
      ).toEqual(['for a']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses an existing stream it cannot use, naming the field and the fix', async () => {
    const prefix = prefixes.next();
    const layout = layoutFor(prefix);
    await withManager((jsm) =>
      jsm.streams.add({
        name: layout.runsStream,
        subjects: [layout.runsSubject],
        retention: RetentionPolicy.Limits,
        storage: StorageType.Memory,
      }),
    );
    const transport = transportFor(prefix);
    try {
      const err = await transport.connect().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toMatchObject({ name: 'NatsStreamConflictError', code: 'BATON_NATS_STREAM_CONFLICT' });
      expect(err?.message).toContain(`stream ${layout.runsStream} exists with retention "limits"`);
      expect(err?.message).toContain('"workqueue"');
      expect(err?.message).toContain(`nats stream rm ${layout.runsStream}`);
    } finally {
      await transport.close();
    }
  });

  it('applies explicit settings to what exists, and never lets defaults override them', async () => {
    const prefix = prefixes.next();
    const layout = layoutFor(prefix);
    const ackWait = () =>
      withManager(
        async (jsm) => (await jsm.consumers.info(layout.runsStream, layout.workersConsumer)).config.ack_wait,
      );
    const connectAndClose = async (options: NatsTransportOptions): Promise<void> => {
      const transport = transportFor(prefix, options);
      await transport.connect();
      await transport.close();
    };
    await connectAndClose({ ackWaitMs: 2_000 });
    expect(await ackWait()).toBe(2_000_000_000);
    const producer = natsTransport({ servers: natsTestUrl(), prefix });
    await producer.connect();
    await producer.close();
    expect(await ackWait()).toBe(2_000_000_000);
    await connectAndClose({ ackWaitMs: 3_000 });
    expect(await ackWait()).toBe(3_000_000_000);
  });

  it('turns direct get back on for a journal stream that had it off', async () => {
    const prefix = prefixes.next();
    const layout = layoutFor(prefix);
    await withManager((jsm) =>
      jsm.streams.add({
        name: layout.journalStream,
        subjects: [layout.journalSubjects],
        storage: StorageType.Memory,
        allow_direct: false,
      }),
    );
    const transport = transportFor(prefix);
    await transport.connect();
    await transport.close();
    const info = await withManager((jsm) => jsm.streams.info(layout.journalStream));
    expect(info.config.allow_direct).toBe(true);
  });

  it('deletes the streams of a prefix, and accepts a prefix that has none', async () => {
    const prefix = prefixes.next();
    const transport = transportFor(prefix);
    await transport.connect();
    await transport.close();
    await deleteNatsStreams({ servers: natsTestUrl(), prefix });
    await deleteNatsStreams({ servers: natsTestUrl(), prefix });
    const names = await withManager(async (jsm) => {
      const found: string[] = [];
      for await (const name of jsm.streams.names()) found.push(name);
      return found;
    });
    expect(names.filter((name) => name.startsWith(`${prefix.toUpperCase()}_`))).toEqual([]);
  });
});
