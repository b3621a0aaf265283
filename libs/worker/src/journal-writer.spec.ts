/**
 * The journal writer's group commit within a run: appends made while a record is in flight go out
 * together as the next record, in call order, and each caller learns when its own entries are
 * durable; a batch the bus refuses as too large goes out one record per append instead.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeEntries,
  memoryStore,
  memoryTransport,
  PayloadTooLargeError,
  type JournalAppend,
  type JournalEntry,
  type Transport,
} from '@baton/core';
import { JournalWriter } from './journal-writer.js';

/** A transport whose appends wait until released, recording what each record held. */
function gatedTransport(options: { maxEntriesPerRecord?: number } = {}) {
  const inner = memoryTransport();
  const records: JournalEntry[][] = [];
  const gates: Array<() => void> = [];
  const transport = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'append') {
        return async (append: JournalAppend) => {
          const entries = decodeEntries(append.data, append.runId);
          if (options.maxEntriesPerRecord !== undefined && entries.length > options.maxEntriesPerRecord) {
            throw new PayloadTooLargeError(`journal record of run ${append.runId}`, 2_000_000, 1_000_000);
          }
          await new Promise<void>((release) => gates.push(release));
          records.push(entries);
          return target.append(append);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as Transport;
  return { transport, records, releaseNext: () => gates.shift()?.() };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

function writerOn(transport: Transport): JournalWriter {
  return new JournalWriter(transport, memoryStore(), 'run-1', 1, [], 0, 0, 100, undefined);
}

const step = (seq: number) => ({
  type: 'ActivityCompleted' as const,
  seq,
  name: 'a',
  result: seq,
  attempts: 1,
});

describe('JournalWriter group commit', () => {
  it('sends appends made during an append as one next record, in order, resolving each when durable', async () => {
    const { transport, records, releaseNext } = gatedTransport();
    await transport.connect();
    const writer = writerOn(transport);
    const resolved: number[] = [];
    const first = writer.append([step(0)]).then(() => resolved.push(0));
    await settle();
    const later = [1, 2, 3].map((seq) => writer.append([step(seq)]).then(() => resolved.push(seq)));
    await settle();
    expect(resolved).toEqual([]); // nothing is durable before its record is acknowledged
    releaseNext();
    await first;
    await settle();
    expect(resolved).toEqual([0]);
    releaseNext();
    await Promise.all(later);
    expect(records.map((r) => r.map((e) => (e as { seq: number }).seq))).toEqual([[0], [1, 2, 3]]);
    expect(resolved).toEqual([0, 1, 2, 3]);
    expect(writer.entries.map((e) => (e as { seq: number }).seq)).toEqual([0, 1, 2, 3]);
    // The second record expected the first one's position, so a fenced writer still cannot slip in.
    const journal = await transport.read('run-1', 0);
    expect(journal).toHaveLength(2);
    expect(writer.position).toBe(journal[1]!.position);
  });

  it('falls back to one record per append when the batch is too large for the bus', async () => {
    const { transport, records, releaseNext } = gatedTransport({ maxEntriesPerRecord: 1 });
    await transport.connect();
    const writer = writerOn(transport);
    const first = writer.append([step(0)]);
    await settle();
    const later = Promise.all([writer.append([step(1)]), writer.append([step(2)])]);
    releaseNext();
    await first;
    for (let i = 0; i < 2; i++) {
      await settle();
      releaseNext();
    }
    await later;
    expect(records.map((r) => r.map((e) => (e as { seq: number }).seq))).toEqual([[0], [1], [2]]);
  });

  it('rejects every append of a batch whose record failed, keeps none of its entries, and writes nothing after it', async () => {
    const inner = memoryTransport();
    await inner.connect();
    let calls = 0;
    const failing = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'append') {
          return async (append: JournalAppend) => {
            if (++calls === 2) throw new Error('bus down');
            await new Promise((r) => setTimeout(r, 20));
            return target.append(append);
          };
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as Transport;
    const writer = writerOn(failing);
    const first = writer.append([step(0)]);
    await settle(); // the first record is on its way; the next two wait for it
    const batch = [writer.append([step(1)]), writer.append([step(2)])].map((p) =>
      p.then(
        () => 'ok',
        (err: Error) => err.message,
      ),
    );
    await first;
    expect(await Promise.all(batch)).toEqual(['bus down', 'bus down']);
    expect(writer.entries.map((e) => (e as { seq: number }).seq)).toEqual([0]);
    expect(calls).toBe(2); // one record for the first append, one (refused) for the other two
    // The failed record left a gap: nothing later may land after it.
    const later = await writer.append([step(3)]).then(
      () => 'ok',
      (err: Error) => err.message,
    );
    expect(later).toBe('bus down');
    expect(calls).toBe(2);
  });
});
