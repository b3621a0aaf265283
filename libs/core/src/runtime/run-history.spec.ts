import { describe, expect, it } from 'vitest';
import { CHECKPOINT_SCHEMA_VERSION } from './checkpoint-schema.js';
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import type { JournalEntry } from '../shared/journal.js';
import { damageMemoryCheckpoint, memoryStore } from '../memory/memory-store.js';
import { memoryTransport } from '../memory/memory-transport.js';
import { encodeJournalRecord } from './payload/journal-records.js';
import { resolvePayloadProtection } from './payload/payload-config.js';
import { findHistoryStart, type HistoryFallback } from './history-start.js';
import { readRunHistory } from './run-history.js';

const protection = resolvePayloadProtection({}, {});

const done = (seq: number, epoch: number): JournalEntry => ({
  type: 'ActivityCompleted',
  seq,
  name: `step${seq}`,
  result: seq * 10,
  attempts: 1,
  epoch,
  at: 0,
});
const marker = (epoch: number): JournalEntry => ({
  type: 'LeaseAcquired',
  epoch,
  at: 0,
  workerId: `w${epoch}`,
});

/** A run with three steps journaled under epoch 1 and two checkpoints (after steps 1 and 2). */
async function fixture() {
  const store = memoryStore();
  const bus = memoryTransport();
  await Promise.all([store.connect(), bus.connect()]);
  const journal = bus.journal;
  const runId = `history-${Math.random().toString(36).slice(2, 10)}`;
  await store.runs.createAndLease(
    { runId, workflow: 'wf', version: 1, input: null, idempotencyKey: null },
    'w1',
    60_000,
  );
  const append = (entries: JournalEntry[]): Promise<number> =>
    journal.append({ runId, data: encodeJournalRecord(entries, runId, protection.codec) });
  const positions: number[] = [];
  const written: JournalEntry[] = [];
  const checkpoint = async (seq: number): Promise<void> => {
    const c: Checkpoint = {
      runId,
      seq,
      epoch: 1,
      journalPosition: positions.at(-1)!,
      entries: [...written],
      status: 'running',
      schemaVersion: CHECKPOINT_SCHEMA_VERSION,
      createdAt: 0,
    };
    await store.checkpoints.write(c);
  };
  for (const seq of [1, 2, 3]) {
    const entry = done(seq, 1);
    positions.push(await append([entry]));
    written.push(entry);
    if (seq < 3) await checkpoint(seq);
  }
  return { store, journal, runId, positions, append };
}

describe('readRunHistory', () => {
  it('reads the newest checkpoint and the journal after it, and counts the seqs', async () => {
    const { store, journal, runId, positions } = await fixture();
    const history = await readRunHistory({ store: store.checkpoints, journal, runId, protection });
    expect(history.checkpoint?.seq).toBe(2);
    expect(history.from).toBe(positions[1]);
    expect(history.entries.map((e) => (e as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect(history.resolved).toBe(history.entries);
    expect(history.journalPosition).toBe(positions[2]);
    expect(history.lastSeq).toBe(2);
  });

  it("drops a stale owner's writes after a newer owner's fence marker", async () => {
    const { store, journal, runId, append } = await fixture();
    await append([marker(2)]);
    await append([done(4, 1)]); // a zombie of epoch 1 writing after epoch 2 fenced it off
    await append([done(4, 2)]);
    const history = await readRunHistory({ store: store.checkpoints, journal, runId, protection });
    expect(history.entries.filter((e) => e.type === 'ActivityCompleted').map((e) => e.epoch)).toEqual([
      1, 1, 1, 2,
    ]);
  });

  it('reads up to a journal position from the newest checkpoint at or before it', async () => {
    const { store, journal, runId, positions } = await fixture();
    const history = await readRunHistory({
      store: store.checkpoints,
      journal,
      runId,
      protection,
      at: { journalPosition: positions[1]! },
    });
    expect(history.checkpoint?.seq).toBe(2);
    expect(history.entries).toHaveLength(2);
    expect(history.journalPosition).toBe(positions[1]);
  });

  it('stands in an older checkpoint for an unreadable newest one, and says so', async () => {
    const { store, journal, runId } = await fixture();
    expect(damageMemoryCheckpoint(store, runId, 2, 'not a checkpoint')).toBe(true);
    const fallbacks: HistoryFallback[] = [];
    const history = await readRunHistory({
      store: store.checkpoints,
      journal,
      runId,
      protection,
      onFallback: (f) => fallbacks.push(f),
    });
    expect(history.checkpoint?.seq).toBe(1);
    expect(history.entries).toHaveLength(3);
    expect(history.lastSeq).toBe(2);
    expect(fallbacks).toMatchObject([{ runId, unreadableSeq: 2, resumedFrom: { seq: 1 } }]);
  });

  it('gives no stand-in for a checkpoint asked for by its seq', async () => {
    const { store, journal, runId } = await fixture();
    damageMemoryCheckpoint(store, runId, 2, 'not a checkpoint');
    await expect(
      readRunHistory({ store: store.checkpoints, journal, runId, protection, at: { checkpoint: 2 } }),
    ).rejects.toMatchObject({ name: 'CheckpointUnreadableError' });
    await expect(
      readRunHistory({ store: store.checkpoints, journal, runId, protection, at: { checkpoint: 9 } }),
    ).rejects.toThrow(`run ${runId} has no checkpoint 9 (it has 1, 2)`);
  });

  it('reads the journal from its start when no checkpoint reads, only where allowed and whole', async () => {
    const { store, journal, runId } = await fixture();
    damageMemoryCheckpoint(store, runId, 1, 'garbage');
    damageMemoryCheckpoint(store, runId, 2, 'garbage');
    await expect(
      readRunHistory({ store: store.checkpoints, journal, runId, protection }),
    ).rejects.toMatchObject({
      name: 'CheckpointUnreadableError',
    });
    const fallbacks: HistoryFallback[] = [];
    const history = await readRunHistory({
      store: store.checkpoints,
      journal,
      runId,
      protection,
      journalFallback: true,
      onFallback: (f) => fallbacks.push(f),
    });
    expect(history.checkpoint).toBeUndefined();
    expect(history.entries).toHaveLength(3);
    expect(fallbacks.map((f) => f.resumedFrom)).toEqual(['journal']);
    // A journal purged since no longer reaches the newest checkpoint's position: refused.
    await journal.purge(runId);
    await expect(
      readRunHistory({ store: store.checkpoints, journal, runId, protection, journalFallback: true }),
    ).rejects.toMatchObject({ name: 'CheckpointUnreadableError' });
  });

  it('takes a start found earlier and records already known, without reading them again', async () => {
    const { store, journal, runId } = await fixture();
    const start = await findHistoryStart({ store: store.checkpoints, runId });
    const history = await readRunHistory({
      store: store.checkpoints,
      journal,
      runId,
      protection,
      start: { ...start, stored: undefined },
      tail: [],
    });
    expect(history.entries).toEqual([]);
    expect(history.lastSeq).toBe(2);
  });
});
