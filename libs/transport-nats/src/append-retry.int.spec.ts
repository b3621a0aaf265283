/**
 * A journal append whose acknowledgement is lost, on the shared NATS server: the record really is
 * stored, and the publisher the append goes through then throws the timeout a lost ack looks like
 * (as in a leader change). The retry must return the first attempt's position and leave one
 * record, whether the server's de-duplication answers or only reading the subject back can tell;
 * a genuine conflict with another writer must still be one; and a retry never runs forever.
 * Also: replicas the server cannot place fail connect() with an error saying what to do.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  errors as natsErrors,
  headers,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager, type PubAck } from '@nats-io/jetstream';
import { natsTestUrl } from '@baton/testing/servers';
import { MSG_ID, publishWithRetry } from './append-retry.js';
import { MessageIds, type AppendRetryStats } from './message-ids.js';
import type { TransportContext } from './context.js';
import { layoutFor } from './layout.js';
import { resolveNatsTransportOptions } from './options.js';
import { JetStreamPublisher } from './publisher.js';
import { natsTransport } from './nats-transport.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const EXPECTED = 'Nats-Expected-Last-Subject-Sequence';

/**
 * What each publish does: 'lose-ack' stores it and throws a timeout; 'drop' sends nothing and
 * throws; 'late' throws at once and stores it just before the next publish (an attempt still on
 * its way when the retry looked for it), `lateLeadMs` before that publish goes out.
 */
type Fate = 'deliver' | 'lose-ack' | 'drop' | 'late';

describe('journal append with a lost acknowledgement', () => {
  const prefixes = testPrefixes(natsTestUrl());
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let real: JetStreamPublisher;

  beforeAll(async () => {
    nc = await connect({ servers: natsTestUrl() });
    jsm = await jetstreamManager(nc);
    real = new JetStreamPublisher(nc, 5_000);
  });
  afterAll(async () => {
    real.close();
    await prefixes.cleanUp();
    await nc.close();
  });

  /** A journal stream of its own, and a context whose publisher follows `fates`, then delivers. */
  async function world(
    options: { duplicateWindowMs?: number; requestTimeoutMs?: number; lateLeadMs?: number } = {},
  ) {
    const layout = layoutFor(prefixes.next());
    await jsm.streams.add({
      name: layout.journalStream,
      subjects: [layout.journalSubjects],
      allow_direct: true,
      ...(options.duplicateWindowMs !== undefined && {
        duplicate_window: options.duplicateWindowMs * 1_000_000,
      }),
    });
    const fates: Fate[] = [];
    let late: (() => Promise<unknown>) | undefined;
    const publisher = {
      publish: async (subject: string, data: Uint8Array, h?: MsgHdrs): Promise<PubAck> => {
        const fate = fates.shift() ?? 'deliver';
        if (late !== undefined) {
          await late();
          late = undefined;
          await sleep(options.lateLeadMs ?? 0);
        }
        if (fate === 'late') late = () => real.publish(subject, data, h);
        if (fate === 'drop' || fate === 'late') throw new natsErrors.TimeoutError();
        const ack = await real.publish(subject, data, h);
        if (fate === 'lose-ack') throw new natsErrors.TimeoutError();
        return ack;
      },
    };
    const stats: AppendRetryStats = { retried: 0, landedEarlier: 0 };
    const context = {
      session: { nc, jsm, publisher },
      options: resolveNatsTransportOptions({ requestTimeoutMs: options.requestTimeoutMs ?? 2_000 }),
      layout,
      streams: { journalReplicas: 1, deadLetterReplicas: 1 },
      messageIds: new MessageIds(),
      appendStats: stats,
      closing: new AbortController().signal,
    } as unknown as TransportContext;
    const subject = layout.journalSubject(`run-${randomBytes(3).toString('hex')}`);
    const append = (expected?: number): Promise<number> => {
      const h = headers();
      h.set(MSG_ID, context.messageIds.next());
      if (expected !== undefined) h.set(EXPECTED, String(expected));
      return publishWithRetry(context, subject, new TextEncoder().encode('entry'), h, stats);
    };
    const count = async (): Promise<number> =>
      (await jsm.streams.info(layout.journalStream, { subjects_filter: subject })).state.messages;
    return { fates, stats, append, count, subject };
  }

  it('finds a first attempt that landed by reading the subject back before it retries', async () => {
    const w = await world();
    const first = await w.append(0);
    w.fates.push('lose-ack');
    const second = await w.append(first);
    expect(second).toBeGreaterThan(first);
    expect(await w.count()).toBe(2);
    expect(w.stats).toEqual({ retried: 1, landedEarlier: 1 });
    // The writer goes on from there: its next expectation holds.
    expect(await w.append(second)).toBeGreaterThan(second);
  });

  it('gets the first attempt’s position from the de-duplication when it lands during the retry', async () => {
    const w = await world();
    w.fates.push('late');
    const position = await w.append(0);
    expect(position).toBeGreaterThan(0);
    expect(await w.count()).toBe(1);
    expect(w.stats).toEqual({ retried: 1, landedEarlier: 1 });
  });

  it('reads the subject back when the retry is refused after the de-duplication window passed', async () => {
    const w = await world({ duplicateWindowMs: 100, lateLeadMs: 300 });
    w.fates.push('late');
    const position = await w.append(0);
    expect(position).toBeGreaterThan(0);
    expect(await w.count()).toBe(1);
    expect(w.stats).toEqual({ retried: 1, landedEarlier: 1 });
  });

  it('finds an unconditional append (the lease marker) once, too', async () => {
    const w = await world();
    w.fates.push('lose-ack', 'lose-ack');
    const position = await w.append(undefined);
    expect(await w.count()).toBe(1);
    expect(position).toBeGreaterThan(0);
    expect(w.stats.landedEarlier).toBe(1);
  });

  it('sends again when the first attempt never landed, and it lands once', async () => {
    const w = await world();
    w.fates.push('drop');
    const position = await w.append(0);
    expect(position).toBeGreaterThan(0);
    expect(await w.count()).toBe(1);
    expect(w.stats).toEqual({ retried: 1, landedEarlier: 0 });
  });

  it('still refuses when another writer appended while the first attempt was lost', async () => {
    const w = await world();
    w.fates.push('drop');
    const mine = w.append(0);
    // A rival with the same expectation lands while this append waits to retry.
    const h = headers();
    h.set(EXPECTED, '0');
    await real.publish(w.subject, new TextEncoder().encode('rival'), h);
    const err = await mine.catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 10071 });
    expect(await w.count()).toBe(1);
  });

  it('gives up within its budget when no attempt is ever answered', async () => {
    const w = await world({ requestTimeoutMs: 200 });
    w.fates.push(...Array.from({ length: 100 }, () => 'drop' as const));
    const started = Date.now();
    const err = await w.append(0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(natsErrors.TimeoutError);
    console.log(`[append retry] gave up after ${Date.now() - started} ms (budget 600 ms)`);
    expect(await w.count()).toBe(0);
  });

  it('fails connect() naming the fix when a single server is asked for 3 replicas', async () => {
    const transport = natsTransport({ servers: natsTestUrl(), prefix: prefixes.next(), replicas: 3 });
    const err = await transport.connect().catch((e: unknown) => e);
    await transport.close();
    expect(err).toMatchObject({ code: 'BATON_NATS_STREAM_CONFLICT' });
    expect((err as Error).message).toMatch(/needs 3 replicas, but the server is a single server/);
    expect((err as Error).message).toMatch(/BATON_NATS_REPLICAS/);
  });

  // The sleep keeps vitest from reporting the spec's timers as leaks on slow machines.
  afterAll(() => sleep(0));
});
