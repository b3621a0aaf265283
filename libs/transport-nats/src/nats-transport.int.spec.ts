/**
 * Behaviour of the NATS transport beyond the conformance suite, on the shared server: long
 * journal tails (read through a consumer), whole batches per fetch, fetches cut short, headers
 * reserved for the server, and dead-letter listing by sequence.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Transport } from '@baton/core/adapter';
import { natsTestUrl } from '@baton/testing/servers';
import { layoutFor, natsTransport } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(natsTestUrl());
afterAll(() => prefixes.cleanUp());

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const texts = (records: { data: Uint8Array }[]): string[] => records.map((r) => decoder.decode(r.data));

let prefix: string;
let transport: Transport;
beforeEach(async () => {
  prefix = prefixes.next();
  transport = natsTransport({ servers: natsTestUrl(), prefix, storage: 'memory' });
  await transport.connect();
});
afterEach(() => transport.close());

describe('nats transport: journal', () => {
  it('reads a long tail in order, honouring after and upto, and leaves no reading consumer behind', async () => {
    const positions: number[] = [];
    for (let i = 0; i < 30; i++) {
      positions.push(await transport.journal.append({ runId: 'long', data: encoder.encode(`r${i}`) }));
      await transport.journal.append({ runId: 'noise', data: encoder.encode(`n${i}`) });
    }
    const all = Array.from({ length: 30 }, (_, i) => `r${i}`);
    expect(texts(await transport.journal.read('long', 0))).toEqual(all);
    expect((await transport.journal.read('long', 0)).map((r) => r.position)).toEqual(positions);
    expect(texts(await transport.journal.read('long', positions[4]!))).toEqual(all.slice(5));
    expect(texts(await transport.journal.read('long', positions[1]!, positions[19]!))).toEqual(
      all.slice(2, 20),
    );
    expect(texts(await transport.journal.read('long', positions[1]!, positions[19]! + 1))).toEqual(
      all.slice(2, 20),
    );
    expect(texts(await transport.journal.read('long', 0, positions[3]!))).toEqual(all.slice(0, 4));
    const nc = await connect({ servers: natsTestUrl() });
    try {
      const jsm = await jetstreamManager(nc);
      await expect
        .poll(async () => (await jsm.streams.info(layoutFor(prefix).journalStream)).state.consumer_count)
        .toBe(0);
    } finally {
      await nc.close();
    }
  });

  it('refuses a run id that would not be one subject token', async () => {
    await expect(transport.journal.append({ runId: 'a.b', data: new Uint8Array() })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
    await expect(transport.journal.read('a.*', 0)).rejects.toMatchObject({ code: 'BATON_CONFIG' });
  });
});

describe('nats transport: run queue', () => {
  it('hands out every ready message of a batch in one fetch', async () => {
    for (let i = 0; i < 10; i++) await transport.runQueue.enqueue(encoder.encode(`m${i}`));
    const batch = await transport.runQueue.fetch({ max: 10, expiresMs: 2_000 });
    expect(texts(batch)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    await Promise.all(batch.map((d) => d.ack()));
  });

  it('delivers a message enqueued after a fetch was cut short at once, not after the ack wait', async () => {
    const controller = new AbortController();
    const cut = transport.runQueue.fetch({ max: 1, expiresMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await cut).toEqual([]);
    await transport.runQueue.enqueue(encoder.encode('after the abort'));
    // The default ack wait is 30 s: anything swallowed by the cut request would miss this fetch.
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 5_000 });
    expect(decoder.decode(delivery?.data ?? new Uint8Array())).toBe('after the abort');
    await delivery?.ack();
  });

  it('waits out a fetch while max ack pending is reached, and delivers again once a slot frees', async () => {
    const limited = natsTransport({ servers: natsTestUrl(), prefix: prefixes.next(), maxAckPending: 2 });
    try {
      await limited.connect();
      for (const label of ['a', 'b', 'c']) await limited.runQueue.enqueue(encoder.encode(label));
      const held = await limited.runQueue.fetch({ max: 5, expiresMs: 2_000 });
      expect(texts(held)).toEqual(['a', 'b']);
      expect(await limited.runQueue.fetch({ max: 5, expiresMs: 300 })).toEqual([]);
      await held[0]?.ack();
      expect(texts(await limited.runQueue.fetch({ max: 5, expiresMs: 2_000 }))).toEqual(['c']);
    } finally {
      await limited.close();
    }
  });

  it('keeps headers reserved for the server away from callers, and refuses to send them', async () => {
    await transport.runQueue.enqueue(encoder.encode('x'), {
      msgId: 'id-1',
      headers: { 'baton-kind': 'start' },
    });
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 2_000 });
    expect(delivery?.headers).toEqual({ 'baton-kind': 'start' });
    await delivery?.ack();
    await expect(
      transport.runQueue.enqueue(encoder.encode('x'), { headers: { 'Nats-Rollup': 'all' } }),
    ).rejects.toMatchObject({
      code: 'BATON_INVALID_HEADER',
    });
    await expect(
      transport.runQueue.enqueue(encoder.encode('x'), { headers: { bad: 'a\r\nb' } }),
    ).rejects.toMatchObject({
      code: 'BATON_INVALID_HEADER',
    });
  });

  it('answers a second ack, or a nak after an ack, without sending it again', async () => {
    await transport.runQueue.enqueue(encoder.encode('once'));
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 2_000 });
    await delivery?.ack();
    await delivery?.ack();
    await delivery?.nak();
    expect(await transport.runQueue.fetch({ max: 1, expiresMs: 300 })).toEqual([]);
  });
});

describe('nats transport: unconfirmed ack', () => {
  it('removes the message for good without a confirmation round trip; an unacked one comes back', async () => {
    const short = natsTransport({
      servers: natsTestUrl(),
      prefix: prefixes.next(),
      storage: 'memory',
      ackWaitMs: 500,
    });
    try {
      await short.connect();
      await short.runQueue.enqueue(encoder.encode('acked'));
      await short.runQueue.enqueue(encoder.encode('left'));
      const [acked, left] = await short.runQueue.fetch({ max: 2, expiresMs: 2_000 });
      expect(texts([acked!, left!])).toEqual(['acked', 'left']);
      acked!.ackUnconfirmed!();
      // Later answers share the first one's fate and send nothing.
      await acked!.ack();
      await acked!.nak();
      // Past the ack wait only the message left unacked is delivered again.
      const again = await short.runQueue.fetch({ max: 2, expiresMs: 2_000 });
      expect(texts(again)).toEqual(['left']);
      expect(again[0]?.deliveryCount).toBe(2);
      await again[0]?.ack();
      expect(await short.runQueue.fetch({ max: 2, expiresMs: 1_000 })).toEqual([]);
    } finally {
      await short.close();
    }
  });
});

describe('nats transport: dead letters', () => {
  it('lists the most recent dead letters by sequence, oldest first', async () => {
    for (let i = 0; i < 120; i++) {
      await transport.deadLetters.add({
        data: encoder.encode(`d${i}`),
        headers: {},
        reason: `r${i}`,
        code: 'c',
        at: i,
      });
    }
    const recent = await transport.deadLetters.list();
    expect(recent.map((l) => l.reason)).toEqual(Array.from({ length: 100 }, (_, i) => `r${i + 20}`));
    expect((await transport.deadLetters.list(500)).map((l) => l.at)).toEqual(
      Array.from({ length: 120 }, (_, i) => i),
    );
    expect(await transport.deadLetters.list(0)).toEqual([]);
  });

  it('keeps a reason with line breaks on one line, and drops headers that cannot travel', async () => {
    await transport.deadLetters.add({
      data: encoder.encode('{'),
      headers: { 'baton-kind': 'start', 'Nats-Msg-Id': 'dup', 'bad name': 'x' },
      reason: 'line one\nline two',
      code: 'unparseable',
      at: 7,
    });
    const [letter] = await transport.deadLetters.list();
    expect(letter).toMatchObject({ reason: 'line one line two', code: 'unparseable', at: 7 });
    expect(letter?.headers).toEqual({ 'baton-kind': 'start' });
  });
});

describe('nats transport: backlog', () => {
  it('counts the run messages no worker has been handed yet, and nothing once closed', async () => {
    expect(await transport.runQueue.backlog!(2_000)).toBe(0);
    for (let i = 0; i < 5; i++) await transport.runQueue.enqueue(encoder.encode(`b${i}`));
    expect(await transport.runQueue.backlog!(2_000)).toBe(5);
    // Delivered (claimed or being claimed) is no longer waiting, acked or not.
    const batch = await transport.runQueue.fetch({ max: 2, expiresMs: 1_000 });
    expect(batch).toHaveLength(2);
    expect(await transport.runQueue.backlog!(2_000)).toBe(3);
    await Promise.all(batch.map((d) => d.ack()));
    expect(await transport.runQueue.backlog!(2_000)).toBe(3);
    await transport.close();
    expect(await transport.runQueue.backlog!(2_000)).toBeUndefined();
  });

  it('details the shared consumer: pending and delivered-but-unacked, and nothing once closed', async () => {
    const consumer = layoutFor(prefix).workersConsumer;
    expect(await transport.runQueue.backlogDetail!(2_000)).toEqual({
      total: 0,
      parts: [{ name: consumer, pending: 0, ackPending: 0 }],
    });
    // Enqueued with no consumer fetching: every message is pending.
    for (let i = 0; i < 4; i++) await transport.runQueue.enqueue(encoder.encode(`d${i}`));
    expect(await transport.runQueue.backlogDetail!(2_000)).toEqual({
      total: 4,
      parts: [{ name: consumer, pending: 4, ackPending: 0 }],
    });
    const batch = await transport.runQueue.fetch({ max: 3, expiresMs: 1_000 });
    expect(batch).toHaveLength(3);
    expect(await transport.runQueue.backlogDetail!(2_000)).toEqual({
      total: 1,
      parts: [{ name: consumer, pending: 1, ackPending: 3 }],
    });
    await batch[0]!.ack();
    expect((await transport.runQueue.backlogDetail!(2_000))?.parts[0]).toMatchObject({
      pending: 1,
      ackPending: 2,
    });
    expect(await transport.runQueue.backlog!(2_000)).toBe(1);
    await transport.close();
    expect(await transport.runQueue.backlogDetail!(2_000)).toBeUndefined();
  });
});
