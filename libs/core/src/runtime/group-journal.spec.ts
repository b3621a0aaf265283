import { describe, expect, it, vi } from 'vitest';
import { memoryStore, memoryTransport } from '../memory/index.js';
import { GROUP_POSITION_BASE, type GroupLog } from '../adapter/contracts/group-journal.js';
import { PayloadTooLargeError } from '../adapter/errors.js';
import { GroupRecordMissingError, withGroupJournal, type JournalMode } from './group-journal.js';

const BASE = GROUP_POSITION_BASE;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (s: string): Uint8Array => encoder.encode(s);
const texts = (records: { data: Uint8Array }[]): string[] => records.map((r) => decoder.decode(r.data));

function setUp(mode: JournalMode, log = 'w1') {
  const bus = memoryTransport();
  const store = memoryStore();
  return { bus, store, journal: withGroupJournal(bus, store, { mode, log }) };
}

describe('group journal', () => {
  it('puts the appends of runs made while a flush is in flight into one record, and reads each run back', async () => {
    const { bus, journal } = setUp('group');
    const appendGroup = vi.spyOn(bus.groupLog!, 'appendGroupRecord');
    const runs = Array.from({ length: 50 }, (_, i) => `run-${i}`);
    const first = await Promise.all(
      runs.map((runId) =>
        journal.journal.append({ runId, data: bytes(`${runId}:1`), expectedLastPosition: 0 }),
      ),
    );
    expect(first.every((p) => p === BASE + 1)).toBe(true);
    // The first flush carried the first run alone; every other run's append waited for it and went in the second.
    expect(appendGroup).toHaveBeenCalledTimes(2);
    await Promise.all(
      runs.map((runId) =>
        journal.journal.append({ runId, data: bytes(`${runId}:2`), expectedLastPosition: BASE + 1 }),
      ),
    );
    for (const runId of runs)
      expect(texts(await journal.journal.read(runId, 0))).toEqual([`${runId}:1`, `${runId}:2`]);
  });

  it('names the pointer each append expects last when it appended or read it, and only then', async () => {
    const { bus, store, journal } = setUp('group');
    const appendPointers = vi.spyOn(store.journalIndex!, 'appendPointers');
    const hints = () => appendPointers.mock.calls.map(([appends]) => appends[0]?.expectedLastPointer);
    const first = await journal.journal.append({ runId: 'r', data: bytes('1'), expectedLastPosition: 0 });
    await journal.journal.append({ runId: 'r', data: bytes('2'), expectedLastPosition: first });
    // An append that expects another position than the remembered one's goes without a hint.
    await expect(
      journal.journal.append({ runId: 'r', data: bytes('stale'), expectedLastPosition: first }),
    ).rejects.toThrow();
    const last = (await store.journalIndex!.readPointers('r', 0)).pointers.at(-1)!;
    expect(hints()).toEqual([undefined, { log: 'w1', record: 1 }, undefined]);

    // Another process's committer learns the run's last pointer by reading the journal to the end.
    const other = withGroupJournal(bus, store, { mode: 'group', log: 'w1' });
    appendPointers.mockClear();
    await other.journal.read('r', 0);
    await other.journal.append({ runId: 'r', data: bytes('3'), expectedLastPosition: last.position });
    expect(hints()).toEqual([{ log: last.log, record: last.record }]);
  });

  it("keeps a run's second append for the next record (one part per run and record)", async () => {
    const { journal } = setUp('group');
    await journal.journal.append({ runId: 'busy', data: bytes('0'), expectedLastPosition: 0 });
    const [a, b] = await Promise.all([
      journal.journal.append({ runId: 'busy', data: bytes('a'), expectedLastPosition: BASE + 1 }),
      journal.journal.append({ runId: 'busy', data: bytes('b') }),
    ]);
    expect([a, b]).toEqual([BASE + 2, BASE + 3]);
    expect(texts(await journal.journal.read('busy', BASE + 1))).toEqual(['a', 'b']);
  });

  it("refuses a fenced writer's append with JournalConflictError, and never reads its entries back", async () => {
    const { journal } = setUp('group');
    await journal.journal.append({ runId: 'r', data: bytes('old owner'), expectedLastPosition: 0 });
    // A new owner fences the run with its marker; the old one's next append expects what it last saw.
    await journal.journal.append({ runId: 'r', data: bytes('marker') });
    const [zombie, other] = await Promise.allSettled([
      journal.journal.append({ runId: 'r', data: bytes('zombie'), expectedLastPosition: BASE + 1 }),
      journal.journal.append({ runId: 'other', data: bytes('other'), expectedLastPosition: 0 }),
    ]);
    expect(zombie).toMatchObject({
      status: 'rejected',
      reason: { code: 'BATON_JOURNAL_CONFLICT', actualLast: BASE + 2 },
    });
    expect(other).toEqual({ status: 'fulfilled', value: BASE + 1 });
    expect(texts(await journal.journal.read('r', 0))).toEqual(['old owner', 'marker']);
  });

  it('keeps a run journaled on its own there in group mode, markers and appends alike', async () => {
    const { bus, journal } = setUp('group');
    const p1 = await bus.journal.append({ runId: 'old', data: bytes('own 1'), expectedLastPosition: 0 });
    const marker = await journal.journal.append({ runId: 'old', data: bytes('marker') });
    const next = await journal.journal.append({
      runId: 'old',
      data: bytes('own 2'),
      expectedLastPosition: marker,
    });
    expect([p1, marker, next].every((p) => p < BASE)).toBe(true);
    expect(texts(await bus.journal.read('old', 0))).toEqual(['own 1', 'marker', 'own 2']);
    expect(texts(await journal.journal.read('old', p1))).toEqual(['marker', 'own 2']);
  });

  it("sends a late first owner's first append to the run's own journal once a newer owner fenced it there", async () => {
    const { journal } = setUp('group');
    // The first owner stalls before its first append; the next owner's marker comes first.
    const marker = await journal.journal.append({ runId: 'r', data: bytes('marker') });
    expect(marker).toBeLessThan(BASE);
    const late = await journal.journal
      .append({ runId: 'r', data: bytes('late'), expectedLastPosition: 0 })
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'BATON_JOURNAL_CONFLICT', actualLast: marker });
    expect(texts(await journal.journal.read('r', 0))).toEqual(['marker']);
  });

  it('in per-run mode, keeps new runs on their own journal and grouped runs in groups', async () => {
    const grouped = setUp('group');
    await grouped.journal.journal.append({ runId: 'g', data: bytes('g1'), expectedLastPosition: 0 });
    const perRun = withGroupJournal(grouped.bus, grouped.store, { mode: 'per-run', log: 'w2' });
    const own = await perRun.journal.append({ runId: 'p', data: bytes('p1'), expectedLastPosition: 0 });
    expect(own).toBeLessThan(BASE);
    expect(texts(await grouped.bus.journal.read('p', 0))).toEqual(['p1']);
    expect(await perRun.journal.append({ runId: 'g', data: bytes('marker') })).toBe(BASE + 2);
    expect(
      await perRun.journal.append({ runId: 'g', data: bytes('g2'), expectedLastPosition: BASE + 2 }),
    ).toBe(BASE + 3);
    expect(texts(await perRun.journal.read('g', 0))).toEqual(['g1', 'marker', 'g2']);
    expect(texts(await perRun.journal.read('p', 0))).toEqual(['p1']);
  });

  it('in per-run mode, asks the store once whether a run is its own, not at every fence marker', async () => {
    const { bus, store } = setUp('group');
    const perRun = withGroupJournal(bus, store, { mode: 'per-run', log: 'w2' });
    const markOwn = vi.spyOn(store.journalIndex!, 'markOwnJournal');
    // A bus whose journal takes no expected position (Kafka) makes every append a fence marker.
    for (const data of ['1', '2', '3']) await perRun.journal.append({ runId: 'p', data: bytes(data) });
    expect(markOwn).toHaveBeenCalledTimes(1);
    expect(texts(await bus.journal.read('p', 0))).toEqual(['1', '2', '3']);

    // Purged, the run is forgotten: a run of that id later asks again, and is grouped if it is.
    await perRun.journal.purge('p');
    const grouped = withGroupJournal(bus, store, { mode: 'group', log: 'w1' });
    await grouped.journal.append({ runId: 'p', data: bytes('g1'), expectedLastPosition: 0 });
    expect(await perRun.journal.append({ runId: 'p', data: bytes('g2') })).toBe(BASE + 2);
    expect(markOwn).toHaveBeenCalledTimes(2);
    expect(texts(await perRun.journal.read('p', 0))).toEqual(['g1', 'g2']);
  });

  it('in per-run mode, asks again for a remembered run a read found grouped', async () => {
    const { bus, store } = setUp('group');
    const perRun = withGroupJournal(bus, store, { mode: 'per-run', log: 'w2' });
    const markOwn = vi.spyOn(store.journalIndex!, 'markOwnJournal');
    await perRun.journal.append({ runId: 'q', data: bytes('own') });
    // Its journal is replaced behind this worker's back (deleted elsewhere, the id reused, grouped).
    await store.journalIndex!.deletePointers('q');
    await bus.journal.purge('q');
    const grouped = withGroupJournal(bus, store, { mode: 'group', log: 'w1' });
    await grouped.journal.append({ runId: 'q', data: bytes('g1'), expectedLastPosition: 0 });
    // A claim reads the run's journal before appending: that read finds it grouped.
    expect(texts(await perRun.journal.read('q', 0))).toEqual(['g1']);
    expect(await perRun.journal.append({ runId: 'q', data: bytes('g2') })).toBe(BASE + 2);
    expect(markOwn).toHaveBeenCalledTimes(2);
    expect(texts(await perRun.journal.read('q', 0))).toEqual(['g1', 'g2']);
  });

  it('reads the records of runs read together in one read of the bus', async () => {
    const { bus, store, journal } = setUp('group');
    const runs = Array.from({ length: 20 }, (_, i) => `run-${i}`);
    await Promise.all(
      runs.map((runId) => journal.journal.append({ runId, data: bytes(runId), expectedLastPosition: 0 })),
    );
    // Two records: the first run's alone, then the 19 that waited for it.
    const reader = withGroupJournal(bus, store, { mode: 'group', log: 'w2' });
    const readGroup = vi.spyOn(bus.groupLog!, 'readGroupRecords');
    const read = await Promise.all(runs.map((runId) => reader.journal.read(runId, 0)));
    expect(read.map(texts)).toEqual(runs.map((runId) => [runId]));
    // Both records, each asked for once, in one request.
    expect(readGroup).toHaveBeenCalledTimes(1);
    expect([...readGroup.mock.calls[0]![1]].sort()).toEqual([1, 2]);
  });

  it("tells onBusRead the bytes each read fetched: whole group records, or a run's own records", async () => {
    const { bus, store, journal } = setUp('group');
    const runs = ['a', 'b', 'c'];
    await Promise.all(
      runs.map((runId) =>
        journal.journal.append({ runId, data: bytes(`${runId}-entry`), expectedLastPosition: 0 }),
      ),
    );
    await bus.journal.append({ runId: 'own', data: bytes('twelve bytes'), expectedLastPosition: 0 });
    const fetched: number[] = [];
    const reader = withGroupJournal(bus, store, {
      mode: 'group',
      log: 'w2',
      onBusRead: (n) => fetched.push(n),
    });
    const readGroup = vi.spyOn(bus.groupLog!, 'readGroupRecords');
    await Promise.all(runs.map((runId) => reader.journal.read(runId, 0)));
    const records = (await readGroup.mock.results[0]!.value) as Map<number, Uint8Array>;
    const groupBytes = [...records.values()].reduce((n, data) => n + data.byteLength, 0);
    // One coalesced read of the group records (each carries other runs' entries too).
    expect(fetched).toEqual([groupBytes]);
    expect(groupBytes).toBeGreaterThan(runs.length * 'a-entry'.length);
    expect(texts(await reader.journal.read('own', 0))).toEqual(['twelve bytes']);
    expect(fetched).toEqual([groupBytes, 12]);
    // A second read of the same run is served from the cache: nothing fetched.
    await reader.journal.read('a', 0);
    expect(fetched).toEqual([groupBytes, 12]);
  });

  it('says which record is gone when a pointer names one the bus no longer has', async () => {
    const { bus, journal } = setUp('group');
    await journal.journal.append({ runId: 'r', data: bytes('a'), expectedLastPosition: 0 });
    await bus.groupLog!.trimGroupLog('w1', 100);
    const err = await journal.journal.read('r', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroupRecordMissingError);
    expect((err as Error).message).toMatch(/group record 1 of log w1/);
  });

  it('purges a run: its pointers and its own journal', async () => {
    const { journal, store } = setUp('group');
    await journal.journal.append({ runId: 'r', data: bytes('a'), expectedLastPosition: 0 });
    await journal.journal.purge('r');
    expect(await store.journalIndex!.readPointers('r', 0)).toEqual({ grouped: false, pointers: [] });
    expect(await journal.journal.read('r', 0)).toEqual([]);
  });

  it("keeps every record within the bus's limit: a flush never fails for its size, and a part too large alone fails only its run", async () => {
    const bus = memoryTransport();
    const store = memoryStore();
    const inner = bus.groupLog!;
    const limit = 300;
    const sizes: number[] = [];
    const limited: GroupLog = {
      maxRecordBytes: () => limit,
      appendGroupRecord: async (log, data) => {
        if (data.byteLength > limit) throw new PayloadTooLargeError('group record', data.byteLength, limit);
        sizes.push(data.byteLength);
        return inner.appendGroupRecord(log, data);
      },
      readGroupRecords: (log, positions) => inner.readGroupRecords(log, positions),
      trimGroupLog: (log, before) => inner.trimGroupLog(log, before),
    };
    const journal = withGroupJournal(
      new Proxy(bus, { get: (t, p) => (p === 'groupLog' ? limited : Reflect.get(t, p)) }),
      store,
      {
        mode: 'group',
        log: 'w1',
      },
    );
    const runs = Array.from({ length: 30 }, (_, i) => `run-${i}`);
    const results = await Promise.allSettled([
      ...runs.map((runId) =>
        journal.journal.append({ runId, data: bytes(`${runId}:${'x'.repeat(40)}`), expectedLastPosition: 0 }),
      ),
      journal.journal.append({ runId: 'huge', data: bytes('y'.repeat(limit)), expectedLastPosition: 0 }),
    ]);
    expect(results.slice(0, runs.length).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results.at(-1)).toMatchObject({ status: 'rejected', reason: { code: 'BATON_TOO_LARGE' } });
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
    for (const runId of runs)
      expect(texts(await journal.journal.read(runId, 0))).toEqual([`${runId}:${'x'.repeat(40)}`]);
  });
});
