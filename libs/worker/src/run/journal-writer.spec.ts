/**
 * The journal writer's group commit within a run: appends made while a record is in flight go out
 * together as the next record, in call order, and each caller learns when its own entries are
 * durable; a batch the bus refuses as too large goes out one record per append instead. A first
 * owner's LeaseAcquired rides at the head of its first record that lands, and only there.
 */
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError, type UnencodableValueError } from '@baton/core';
import type { JournalAppend, Transport } from '@baton/core/adapter';
import { decodeEntries, type JournalEntry } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { withCapability } from '../capabilities.spec-helper.js';
import { JournalWriter, type JournalWriterOptions } from './journal-writer.js';

/** A transport whose appends wait until released, recording what each record held. */
function gatedTransport(options: { maxEntriesPerRecord?: number } = {}) {
  const inner = memoryTransport();
  const records: JournalEntry[][] = [];
  const gates: Array<() => void> = [];
  const transport = withCapability(inner, 'journal', {
    append: async (append: JournalAppend) => {
      const entries = decodeEntries(append.data, append.runId);
      if (options.maxEntriesPerRecord !== undefined && entries.length > options.maxEntriesPerRecord) {
        throw new PayloadTooLargeError(`journal record of run ${append.runId}`, 2_000_000, 1_000_000);
      }
      await new Promise<void>((release) => gates.push(release));
      records.push(entries);
      return inner.journal.append(append);
    },
  });
  return { transport, records, releaseNext: () => gates.shift()?.() };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A new run's writer: epoch 1, nothing journaled yet, a checkpoint every 100 entries. */
function writerOptions(transport: Transport): JournalWriterOptions {
  return {
    transport,
    store: memoryStore(),
    runId: 'run-1',
    epoch: 1,
    entries: [],
    position: 0,
    checkpointSeq: 0,
    checkpointEvery: 100,
  };
}

function writerOn(transport: Transport): JournalWriter {
  return new JournalWriter(writerOptions(transport));
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
    const journal = await transport.journal.read('run-1', 0);
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
    const failing = withCapability(inner, 'journal', {
      append: async (append: JournalAppend) => {
        if (++calls === 2) throw new Error('bus down');
        await new Promise((r) => setTimeout(r, 20));
        return inner.journal.append(append);
      },
    });
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

describe('JournalWriter and values with no JSON form', () => {
  const bad = (seq: number) => ({ ...step(seq), result: { amount: BigInt(seq) } });
  const outcome = (p: Promise<void>) =>
    p.then(
      () => 'ok',
      (err: Error) => `${err.name}: ${(err as UnencodableValueError).what ?? err.message}`,
    );
  const seqs = (records: JournalEntry[][]) =>
    records.map((r) => r.map((e) => ('seq' in e ? (e as { seq: number }).seq : e.type)));

  it('sends a batch holding an unencodable result one append at a time: the others land, only it fails, and a step failure goes on', async () => {
    const { transport, records, releaseNext } = gatedTransport();
    await transport.connect();
    const reported: string[] = [];
    const writer = new JournalWriter({
      ...writerOptions(transport),
      onUnencodableStep: (err) => reported.push(err.what),
    });
    const first = writer.append([step(0)]);
    await settle(); // the next three wait for the first record and go out as one batch
    const batch = [
      writer.append([step(1)]),
      writer.append([bad(2)], { unencodableFailsStep: true }),
      writer.append([step(3)]),
    ].map(outcome);
    releaseNext();
    await first;
    for (let i = 0; i < 3; i++) {
      await settle();
      releaseNext();
    }
    expect(await Promise.all(batch)).toEqual([
      'ok',
      'UnencodableValueError: result of activity a (step #2)',
      'ok',
    ]);
    expect(reported).toEqual(['result of activity a (step #2)']);
    // The step journals its failure in the result's place; the writer was not stopped.
    const failed = writer.append([
      { type: 'ActivityFailed', seq: 2, name: 'a', error: { name: 'E', message: 'm' }, attempts: 1 },
    ]);
    await settle();
    releaseNext();
    await failed;
    expect(seqs(records)).toEqual([[0], [1], [3], [2]]);
  });

  it('refuses everything but RunFailed after an unencodable append no step replaces', async () => {
    const { transport, records, releaseNext } = gatedTransport();
    await transport.connect();
    const writer = writerOn(transport);
    const first = writer.append([step(0)]);
    await settle();
    // Pipelined: the result is refused while the workflow already finished and asked to complete.
    const refused = outcome(writer.append([bad(1)]));
    const completed = outcome(writer.append([{ type: 'RunCompleted', result: 'done' }]));
    releaseNext();
    await first;
    expect(await refused).toBe('UnencodableValueError: result of activity a (step #1)');
    expect(await completed).toBe('UnencodableValueError: result of activity a (step #1)');
    const failedRun = writer.append([
      { type: 'RunFailed', error: { name: 'UnencodableValueError', message: 'm' } },
    ]);
    await settle();
    releaseNext();
    await failedRun;
    expect(seqs(records)).toEqual([[0], ['RunFailed']]);
  });

  it("puts a first owner's LeaseAcquired at the head of its first record that lands, and never again", async () => {
    const { transport, records, releaseNext } = gatedTransport();
    await transport.connect();
    const lead: JournalEntry = { type: 'LeaseAcquired', epoch: 1, at: 1, workerId: 'worker-first' };
    const writer = new JournalWriter({ ...writerOptions(transport), leadEntry: lead });
    const sent = writer.append([step(0)]);
    await settle();
    releaseNext();
    await sent;
    const next = writer.append([step(1)]);
    await settle();
    releaseNext();
    await next;
    expect(records.map((r) => r.map((e) => e.type))).toEqual([
      ['LeaseAcquired', 'ActivityCompleted'],
      ['ActivityCompleted'],
    ]);
    expect(records[0]![0]).toMatchObject({ workerId: 'worker-first', epoch: 1 });
    expect(writer.entries.map((e) => e.type)).toEqual([
      'LeaseAcquired',
      'ActivityCompleted',
      'ActivityCompleted',
    ]);
  });
});
