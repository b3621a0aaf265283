import { describe, expect, it, vi } from 'vitest';
import { GROUP_POSITION_BASE } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { withGroupJournal } from '@baton/core/runtime';
import { GroupLogTrimmer } from './group-log-trim.js';

const BASE = GROUP_POSITION_BASE;
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const texts = (records: { data: Uint8Array }[]): string[] =>
  records.map((r) => new TextDecoder().decode(r.data));

function setUp() {
  const bus = memoryTransport();
  const store = memoryStore();
  const journal = withGroupJournal(bus, store, { mode: 'group', log: 'w1' });
  const trimmer = new GroupLogTrimmer(bus.groupLog!, store.journalIndex!);
  return { bus, store, journal, trimmer };
}

describe('group log trim', () => {
  it('removes the records only deleted runs named, keeps every record a kept run names, and forgets an unused log', async () => {
    const { bus, store, journal, trimmer } = setUp();
    // Three flushes: a alone; then c alone (a flush takes what waits when it starts); then a and b together.
    await journal.journal.append({ runId: 'a', data: bytes('a1'), expectedLastPosition: 0 });
    await Promise.all([
      journal.journal.append({ runId: 'c', data: bytes('c1'), expectedLastPosition: 0 }),
      journal.journal.append({ runId: 'a', data: bytes('a2'), expectedLastPosition: BASE + 1 }),
      journal.journal.append({ runId: 'b', data: bytes('b1'), expectedLastPosition: 0 }),
    ]);
    const recordsOf = async (runId: string) =>
      (await store.journalIndex!.readPointers(runId, 0)).pointers.map((p) => p.record);
    const [aRecords, bRecords, cRecords] = [await recordsOf('a'), await recordsOf('b'), await recordsOf('c')];
    expect(bRecords).toEqual([aRecords[1]]);
    expect(aRecords[0]!).toBeLessThan(cRecords[0]!);
    expect(cRecords[0]!).toBeLessThan(bRecords[0]!);

    expect(await trimmer.pass()).toEqual({ logs: 1, trimmed: 1, forgotten: 0 });
    await store.journalIndex!.deletePointers('a');
    expect(await trimmer.pass()).toEqual({ logs: 1, trimmed: 1, forgotten: 0 });
    // a's first record went; the one it shared with b stays, as does everything b and c read.
    expect((await bus.groupLog!.readGroupRecords('w1', aRecords)).has(aRecords[0]!)).toBe(false);
    expect(texts(await journal.journal.read('b', 0))).toEqual(['b1']);
    expect(texts(await journal.journal.read('c', 0))).toEqual(['c1']);
    // Nothing moved: the pass asks the bus for nothing.
    const trim = vi.spyOn(bus.groupLog!, 'trimGroupLog');
    expect(await trimmer.pass()).toEqual({ logs: 1, trimmed: 0, forgotten: 0 });
    expect(trim).not.toHaveBeenCalled();

    await store.journalIndex!.deletePointers('b');
    await store.journalIndex!.deletePointers('c');
    expect(await trimmer.pass()).toEqual({ logs: 1, trimmed: 1, forgotten: 1 });
    expect((await bus.groupLog!.readGroupRecords('w1', [...aRecords, ...cRecords])).size).toBe(0);
    expect(await trimmer.pass()).toEqual({ logs: 0, trimmed: 0, forgotten: 0 });
    // A later append makes the log known again, and its record is kept.
    await journal.journal.append({ runId: 'd', data: bytes('d1'), expectedLastPosition: 0 });
    expect(await trimmer.pass()).toEqual({ logs: 1, trimmed: 1, forgotten: 0 });
    expect(texts(await journal.journal.read('d', 0))).toEqual(['d1']);
  });

  it('never trims a record whose pointers are still on their way', async () => {
    const { store, journal, trimmer } = setUp();
    await journal.journal.append({ runId: 'old', data: bytes('old'), expectedLastPosition: 0 });
    await store.journalIndex!.deletePointers('old');
    // The next flush's record lands, and the trim runs before its pointers reach the store.
    const index = store.journalIndex!;
    const appendPointers = index.appendPointers.bind(index);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(index, 'appendPointers').mockImplementation(async (appends) => {
      await held;
      return appendPointers(appends);
    });
    const inFlight = journal.journal.append({ runId: 'new', data: bytes('new'), expectedLastPosition: 0 });
    await vi.waitFor(() => expect(index.appendPointers).toHaveBeenCalled());
    await trimmer.pass();
    release();
    await inFlight;
    expect(texts(await journal.journal.read('new', 0))).toEqual(['new']);
  });
});
