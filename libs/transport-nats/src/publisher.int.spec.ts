/**
 * The pipelined publisher on the shared NATS server: acks matched to their publishes under
 * concurrency, the server's API errors and "no responders" passed through as nats.js raises them,
 * a publish nobody acks timed out by the sweep, and close() failing what is still pending.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, errors as natsErrors, headers, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { natsTestUrl } from '@baton/testing/servers';
import { JetStreamPublisher } from './publisher.js';

describe('JetStreamPublisher', () => {
  const stream = `PUBTEST_${randomBytes(4).toString('hex').toUpperCase()}`;
  const subject = `${stream.toLowerCase()}.events`;
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: natsTestUrl() });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
  });

  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('resolves each of many concurrent publishes with its own stream sequence', async () => {
    const publisher = new JetStreamPublisher(nc, 5_000);
    const acks = await Promise.all(
      Array.from({ length: 500 }, (_, i) => publisher.publish(subject, new TextEncoder().encode(String(i)))),
    );
    const seqs = acks.map((a) => a.seq);
    expect(new Set(seqs).size).toBe(500);
    expect(acks.every((a) => a.stream === stream)).toBe(true);
    // The message stored at each acked sequence is the one that publish sent.
    const jsm = await jetstreamManager(nc);
    for (const i of [0, 137, 499]) {
      const stored = await jsm.streams.getMessage(stream, { seq: seqs[i]! });
      expect(new TextDecoder().decode(stored!.data)).toBe(String(i));
    }
    publisher.close();
  });

  it("rejects with the server's API error: a wrong expected last subject sequence", async () => {
    const publisher = new JetStreamPublisher(nc, 5_000);
    const own = `${stream.toLowerCase()}.expect.${randomBytes(3).toString('hex')}`;
    await publisher.publish(own, new Uint8Array([1]));
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', '0');
    const err = await publisher.publish(own, new Uint8Array([2]), h).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JetStreamApiError);
    expect((err as JetStreamApiError).code).toBe(10071);
    publisher.close();
  });

  it('rejects at once when no stream listens on the subject (no responders)', async () => {
    const publisher = new JetStreamPublisher(nc, 5_000);
    const started = Date.now();
    const err = (await publisher
      .publish(`nostream.${randomBytes(3).toString('hex')}`, new Uint8Array([1]))
      .catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('JetStreamNotEnabled');
    expect(err.cause).toBeInstanceOf(natsErrors.NoRespondersError);
    expect(Date.now() - started).toBeLessThan(4_000);
    publisher.close();
  });

  it('times out a publish that nobody acknowledges, and drops the late ack', async () => {
    const silent = `silent.${randomBytes(3).toString('hex')}`;
    // A plain subscriber takes the message (so there are responders) but never replies.
    const sub = nc.subscribe(silent);
    const publisher = new JetStreamPublisher(nc, 200);
    const err = await publisher.publish(silent, new Uint8Array([1])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(natsErrors.TimeoutError);
    sub.unsubscribe();
    publisher.close();
  });

  it('close() rejects what is pending and every later publish', async () => {
    const silent = `silent.${randomBytes(3).toString('hex')}`;
    const sub = nc.subscribe(silent);
    const publisher = new JetStreamPublisher(nc, 60_000);
    const pending = publisher.publish(silent, new Uint8Array([1])).catch((e: unknown) => e);
    publisher.close();
    expect(await pending).toBeInstanceOf(natsErrors.ClosedConnectionError);
    const later = await publisher.publish(subject, new Uint8Array([1])).catch((e: unknown) => e);
    expect(later).toBeInstanceOf(natsErrors.ClosedConnectionError);
    sub.unsubscribe();
  });
});
