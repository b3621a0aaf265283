/**
 * The worker's stream writer (run-streams.ts) against the in-memory bus: fencing with optimistic
 * append, the fence record where the bus has none (Kafka's case), batching, and a replay's
 * workflow writes skipped. What a reader sees is read with core's fold, as client.stream reads.
 */
import { describe, expect, it } from 'vitest';
import type { StreamItem } from '@baton/core';
import type { RunStreamLog } from '@baton/core/adapter';
import { memoryTransport } from '@baton/core/memory';
import { IDENTITY_PAYLOAD_CODEC, StreamFold } from '@baton/core/runtime';
import { RunStreams } from './run-streams.js';

const RUN = 'run-1';

function writerAt(log: RunStreamLog, epoch: number, failures: unknown[] = []): RunStreams {
  return new RunStreams({
    log,
    runId: RUN,
    epoch,
    codec: IDENTITY_PAYLOAD_CODEC,
    sinceMs: 0,
    onFailure: (err) => failures.push(err),
  });
}

const chunk = (value: unknown, more: Partial<{ ordinal: number; step: number; attempt: number }> = {}) =>
  ({ kind: 'chunk', value, ...more }) as const;

async function readAll(log: RunStreamLog, stream = 'out'): Promise<StreamItem[]> {
  const fold = new StreamFold(IDENTITY_PAYLOAD_CODEC, RUN, stream);
  return fold.applyAll(await log.read(RUN, stream, 0));
}

const values = (items: StreamItem[]): unknown[] => items.map((i) => (i.kind === 'chunk' ? i.value : i.kind));

/** The memory bus's run streams, told to behave as a bus without optimistic append (Kafka). */
function withoutOptimisticAppend(log: RunStreamLog): RunStreamLog {
  return {
    ...log,
    supportsOptimisticAppend: false,
    append: ({ expectedLastPosition: _ignored, ...append }) => log.append(append),
    read: (...args) => log.read(...args),
    register: (...args) => log.register(...args),
    names: (...args) => log.names(...args),
    purge: (...args) => log.purge(...args),
  };
}

describe('run stream writer', () => {
  it('fences an older epoch: its write after the newer owner’s rejects with LeaseLostError and is never read', async () => {
    const log = memoryTransport().runStreams!;
    const failures: unknown[] = [];
    const zombie = writerAt(log, 1, failures);
    await zombie.write('out', chunk('a1'), 4);
    const owner = writerAt(log, 2);
    await owner.write('out', chunk('b1'), 4);
    await expect(zombie.write('out', chunk('a2'), 4)).rejects.toMatchObject({ code: 'BATON_LEASE_LOST' });
    expect(failures).toHaveLength(1);
    expect(values(await readAll(log))).toEqual(['a1', 'b1']);
    // Sequence numbers stay whole: the newer owner numbered after what it found.
    expect((await readAll(log)).map((i) => i.seq)).toEqual([1, 2]);
  });

  it('numbers again after a conflict: a record that landed after the writer read the stream is kept before its own', async () => {
    const log = memoryTransport().runStreams!;
    const owner = writerAt(log, 2);
    await owner.write('out', chunk('b1'), 4);
    // An older writer that read the stream before b1 landed expects position 0: refused, it
    // re-reads, finds the newer epoch and stops.
    const late = writerAt(log, 1);
    await expect(late.write('out', chunk('a1'), 4)).rejects.toMatchObject({ code: 'BATON_LEASE_LOST' });
    // A same-epoch writer racing (a second session would not exist, but the bus may reorder):
    const racer = writerAt(log, 2);
    await racer.write('out', chunk('b2'), 4);
    await owner.write('out', chunk('b3'), 4);
    expect((await readAll(log)).map((i) => [i.seq, (i as { value?: unknown }).value])).toEqual([
      [1, 'b1'],
      [2, 'b2'],
      [3, 'b3'],
    ]);
  });

  it('without optimistic append, a new owner fences first: an older epoch’s later record is ignored by readers', async () => {
    const log = withoutOptimisticAppend(memoryTransport().runStreams!);
    const zombie = writerAt(log, 1);
    await zombie.write('out', chunk('a1'), 4);
    const owner = writerAt(log, 2);
    await owner.write('out', chunk('b1'), 4);
    // The bus cannot refuse the zombie: its record lands, after the owner's fence.
    await zombie.write('out', chunk('a2'), 4);
    await owner.write('out', chunk('b2'), 4);
    expect((await readAll(log)).map((i) => [i.seq, (i as { value?: unknown }).value])).toEqual([
      [1, 'a1'],
      [2, 'b1'],
      [3, 'b2'],
    ]);
  });

  it('without optimistic append, a record landing between the new owner’s read and its fence is counted', async () => {
    const base = withoutOptimisticAppend(memoryTransport().runStreams!);
    const zombie = writerAt(base, 1);
    await zombie.write('out', chunk('a1'), 4);
    let injected = false;
    const log: RunStreamLog = {
      ...base,
      // After the owner's first read, and before its fence, the zombie lands a2.
      read: async (...args) => {
        const records = await base.read(...args);
        if (!injected) {
          injected = true;
          await zombie.write('out', chunk('a2'), 4);
        }
        return records;
      },
    };
    const owner = writerAt(log, 2);
    await owner.write('out', chunk('b1'), 4);
    expect(values(await readAll(base))).toEqual(['a1', 'a2', 'b1']);
    expect((await readAll(base)).map((i) => i.seq)).toEqual([1, 2, 3]);
  });

  it('appends writes queued during an append together, in order', async () => {
    const base = memoryTransport().runStreams!;
    let appends = 0;
    const log: RunStreamLog = {
      ...base,
      append: async (append) => {
        appends++;
        await new Promise((r) => setTimeout(r, 5));
        return base.append(append);
      },
    };
    const writer = writerAt(log, 1);
    await Promise.all(Array.from({ length: 200 }, (_, i) => writer.write('out', chunk(i), 3)));
    const items = await readAll(base);
    expect(items.map((i) => i.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(values(items)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(appends).toBeLessThan(10);
  });

  it('skips a replay’s workflow writes the stream already holds, and resets a step’s chunks for a new attempt', async () => {
    const log = memoryTransport().runStreams!;
    const first = writerAt(log, 1);
    await first.write('out', chunk('w1', { ordinal: 1 }), 4);
    await first.write('out', chunk('t1', { step: 3, attempt: 1 }), 4);
    await first.write('out', chunk('w2', { ordinal: 2 }), 4);
    // The next owner replays the workflow (ordinals 1 and 2 again) and re-runs step 3.
    const second = writerAt(log, 2);
    await second.write('out', chunk('w1', { ordinal: 1 }), 4);
    await second.write('out', chunk('t1', { step: 3, attempt: 1 }), 4);
    await second.write('out', chunk('w2', { ordinal: 2 }), 4);
    await second.write('out', chunk('w3', { ordinal: 3 }), 4);
    await second.write('out', { kind: 'close', ordinal: 4 }, 0);
    await second.flush();
    expect(await readAll(log)).toEqual([
      { seq: 1, kind: 'chunk', value: 'w1' },
      { seq: 2, kind: 'chunk', value: 't1', step: 3, attempt: 1 },
      { seq: 3, kind: 'chunk', value: 'w2' },
      { seq: 4, kind: 'reset', step: 3, attempt: 1 },
      { seq: 5, kind: 'chunk', value: 't1', step: 3, attempt: 1 },
      { seq: 6, kind: 'chunk', value: 'w3' },
      { seq: 7, kind: 'close' },
    ]);
    expect(await log.names(RUN)).toEqual(['out']);
  });
});
