import { describe, expect, it } from 'vitest';
import type { JournalAppend, JournalLog } from './contracts/transport.js';
import { checkedJournal, journalOnContext } from './journal-log.js';
import { MemoryJournal } from '../memory/memory-journal.js';

/** The memory journal, with every call that reaches it recorded. */
function recorded(): { journal: JournalLog; calls: string[] } {
  const memory = new MemoryJournal();
  const calls: string[] = [];
  const journal: JournalLog = {
    supportsOptimisticAppend: false,
    scansSharedLog: true,
    purgeMode: 'retention',
    append: (append: JournalAppend) => {
      calls.push(`append ${append.runId}`);
      return memory.append(append);
    },
    read: (runId, after, upto) => {
      calls.push(`read ${runId} ${after} ${upto}`);
      return memory.read(runId, after, upto);
    },
    purge: (runId) => {
      calls.push(`purge ${runId}`);
      return memory.purge(runId);
    },
  };
  return { journal, calls };
}

describe('checkedJournal', () => {
  it("passes valid calls to the bus's journal and keeps its flags", async () => {
    const { journal, calls } = recorded();
    const checked = checkedJournal(journal, 'test transport');
    expect(checked).toMatchObject({
      supportsOptimisticAppend: false,
      scansSharedLog: true,
      purgeMode: 'retention',
    });
    const p1 = await checked.append({ runId: 'run-1', data: new Uint8Array([1]), expectedLastPosition: 0 });
    await checked.append({ runId: 'run-1', data: new Uint8Array([2]), expectedLastPosition: p1 });
    expect((await checked.read('run-1', 0)).map((r) => r.data[0])).toEqual([1, 2]);
    await checked.purge('run-1');
    expect(calls).toEqual(['append run-1', 'append run-1', 'read run-1 0 undefined', 'purge run-1']);
  });

  it('refuses a run id that is not one token, in every call, before the bus is asked', async () => {
    const { journal, calls } = recorded();
    const checked = checkedJournal(journal, 'test transport');
    const invalid = { code: 'BATON_CONFIG', message: expect.stringContaining("run id 'a.b' is invalid") };
    await expect(checked.append({ runId: 'a.b', data: new Uint8Array() })).rejects.toMatchObject(invalid);
    await expect(checked.read('a.b', 0)).rejects.toMatchObject(invalid);
    await expect(checked.purge('a.b')).rejects.toMatchObject(invalid);
    expect(calls).toEqual([]);
  });

  it('refuses an expected last position that is no position, naming the transport, the run and the value', async () => {
    const { journal, calls } = recorded();
    const checked = checkedJournal(journal, 'test transport');
    for (const expectedLastPosition of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(
        checked.append({ runId: 'run-1', data: new Uint8Array(), expectedLastPosition }),
      ).rejects.toMatchObject({
        code: 'BATON_CONFIG',
        option: 'expectedLastPosition',
        value: String(expectedLastPosition),
        message: `test transport: append to run run-1 expects last position ${String(expectedLastPosition)}; give a whole number of at least 0, or none`,
      });
    }
    expect(calls).toEqual([]);
  });

  it('answers a read with an empty range without asking the bus', async () => {
    const { journal, calls } = recorded();
    const checked = checkedJournal(journal, 'test transport');
    expect(await checked.read('run-1', 5, 5)).toEqual([]);
    expect(await checked.read('run-1', 5, 3)).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('journalOnContext', () => {
  it("hands every call the context given for the call's operation, and keeps the flags", async () => {
    const memory = new MemoryJournal();
    const seen: string[] = [];
    const journal = journalOnContext(
      (operation) => ({ operation }),
      {
        supportsOptimisticAppend: true,
        purgeMode: 'deletes',
        append: (context, append) => {
          seen.push(context.operation);
          return memory.append(append);
        },
        read: (context, runId, after, upto) => {
          seen.push(context.operation);
          return memory.read(runId, after, upto);
        },
        purge: (context, runId) => {
          seen.push(context.operation);
          return memory.purge(runId);
        },
      },
      'test transport',
    );
    expect(journal).toMatchObject({ supportsOptimisticAppend: true, purgeMode: 'deletes' });
    expect(journal.scansSharedLog).toBeUndefined();
    await journal.append({ runId: 'run-1', data: new Uint8Array([1]) });
    expect(await journal.read('run-1', 0)).toHaveLength(1);
    await journal.purge('run-1');
    expect(seen).toEqual(['journal.append', 'journal.read', 'journal.purge']);
  });

  it('rejects a call whose context cannot be had', async () => {
    const journal = journalOnContext(
      () => {
        throw new Error('not connected');
      },
      new MemoryJournalOnContext(),
      'test transport',
    );
    await expect(journal.append({ runId: 'run-1', data: new Uint8Array() })).rejects.toThrow('not connected');
    await expect(journal.read('run-1', 0)).rejects.toThrow('not connected');
    await expect(journal.purge('run-1')).rejects.toThrow('not connected');
  });

  it('checks every call before it asks for the context, and answers an empty range without it', async () => {
    const asked: string[] = [];
    const journal = journalOnContext(
      (operation) => {
        asked.push(operation);
        throw new Error('not connected');
      },
      new MemoryJournalOnContext(),
      'test transport',
    );
    const invalid = { code: 'BATON_CONFIG', message: expect.stringContaining("run id 'a.b' is invalid") };
    await expect(journal.append({ runId: 'a.b', data: new Uint8Array() })).rejects.toMatchObject(invalid);
    await expect(journal.read('a.b', 0)).rejects.toMatchObject(invalid);
    await expect(journal.purge('a.b')).rejects.toMatchObject(invalid);
    await expect(
      journal.append({ runId: 'run-1', data: new Uint8Array(), expectedLastPosition: -1 }),
    ).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      option: 'expectedLastPosition',
      message:
        'test transport: append to run run-1 expects last position -1; give a whole number of at least 0, or none',
    });
    expect(await journal.read('run-1', 5, 5)).toEqual([]);
    expect(asked).toEqual([]);
  });
});

/** The memory journal as a journal written against a context it ignores. */
class MemoryJournalOnContext {
  readonly supportsOptimisticAppend = true;
  readonly purgeMode = 'deletes';
  private readonly memory = new MemoryJournal();
  append(_context: unknown, append: JournalAppend): Promise<number> {
    return this.memory.append(append);
  }
  read(_context: unknown, runId: string, after: number, upto?: number) {
    return this.memory.read(runId, after, upto);
  }
  purge(_context: unknown, runId: string): Promise<void> {
    return this.memory.purge(runId);
  }
}
