import { describe, expect, it } from 'vitest';
import type { DeadLetter, EnqueueOptions } from './contracts/transport.js';
import {
  deadLetterQueue,
  shelfOnContext,
  type ContextShelf,
  type DeadLetterShelf,
} from './dead-letter-queue.js';
import { MemoryDeadLetters } from '../memory/memory-dead-letters.js';

function letter(code: string, at: number): DeadLetter {
  return { data: new TextEncoder().encode(code), headers: { code }, reason: `reason ${code}`, code, at };
}

/** The memory shelf, walked `scanPage` letters at a time, with the calls to `newest` counted. */
function shelfOf(scanPage: number): { shelf: DeadLetterShelf; reads: number[] } {
  const memory = new MemoryDeadLetters(100);
  const reads: number[] = [];
  const shelf: DeadLetterShelf = {
    owner: 'test shelf',
    idPrefix: 'x-',
    scanPage,
    store: (l) => memory.store(l),
    newest: (before, count) => {
      reads.push(count);
      return memory.newest(before, count);
    },
    read: (position) => memory.read(position),
    remove: (positions) => memory.remove(positions),
    removeAll: () => memory.removeAll(),
    notOriginal: (l) => (l.code === 'cut' ? 'its data was cut' : undefined),
  };
  return { shelf, reads };
}

describe('deadLetterQueue', () => {
  it('purges by time across several pages of the walk, and only the letters older than it', async () => {
    const { shelf, reads } = shelfOf(2);
    const queue = deadLetterQueue(shelf, async () => undefined);
    for (const [i, code] of ['a', 'b', 'c', 'd', 'e'].entries()) await queue.add(letter(code, 100 + i));
    expect(await queue.purge({ olderThan: 103 })).toBe(3);
    expect(reads).toEqual([2, 2, 2]);
    expect((await queue.list()).map((l) => l.code)).toEqual(['d', 'e']);
  });

  it('reads ids through the shelf prefix: another shape of id is no letter, and purges count nothing', async () => {
    const { shelf } = shelfOf(10);
    const queue = deadLetterQueue(shelf, async () => undefined);
    await queue.add(letter('a', 1));
    expect(await queue.get('1')).toBeUndefined();
    expect(await queue.get('x-1')).toMatchObject({ code: 'a' });
    expect(await queue.purge({ ids: ['1', 'x-01', 'x-1'] })).toBe(1);
  });

  it('refuses to redrive a letter the shelf says is not the original, and enqueues nothing', async () => {
    const { shelf } = shelfOf(10);
    const enqueued: [Uint8Array, EnqueueOptions | undefined][] = [];
    const queue = deadLetterQueue(shelf, async (data, options) => {
      enqueued.push([data, options]);
    });
    await queue.add(letter('cut', 1));
    await expect(queue.redrive('x-1')).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      message: 'test shelf: dead letter x-1 cannot be redriven: its data was cut; purge it once handled',
    });
    expect(enqueued).toEqual([]);
    await queue.add(letter('ok', 2));
    expect(await queue.redrive('x-2')).toEqual({ id: 'x-2', bytes: 2 });
    expect(enqueued).toEqual([[new TextEncoder().encode('ok'), { headers: { code: 'ok' } }]]);
    expect(await queue.get('x-2')).toBeUndefined();
  });
});

describe('shelfOnContext', () => {
  /** A context shelf over the memory shelf that records which context and operation each call got. */
  function recording(calls: string[]): ContextShelf<{ id: number }> {
    const memory = new MemoryDeadLetters(100);
    return {
      owner: 'context shelf',
      scanPage: 10,
      store: async (context, l) => {
        calls.push(`store ${context.id}`);
        return memory.store(l);
      },
      newest: async (context, before, count, operation) => {
        calls.push(`newest ${context.id} ${operation}`);
        return memory.newest(before, count);
      },
      read: async (context, position, operation) => {
        calls.push(`read ${context.id} ${operation}`);
        return memory.read(position);
      },
      remove: async (context, positions, operation) => {
        calls.push(`remove ${context.id} ${operation}`);
        return memory.remove(positions);
      },
      removeAll: async (context, operation) => {
        calls.push(`removeAll ${context.id} ${operation}`);
        return memory.removeAll();
      },
      notOriginal: (l) => (l.code === 'cut' ? 'its data was cut' : undefined),
    };
  }

  it("hands every call the context `open` gives for the call's operation", async () => {
    const calls: string[] = [];
    const opened: string[] = [];
    const shelf = shelfOnContext((operation) => {
      opened.push(operation);
      return { id: 7 };
    }, recording(calls));
    const queue = deadLetterQueue(shelf, async () => undefined);
    await queue.add(letter('a', 1));
    await queue.add(letter('cut', 2));
    expect((await queue.page()).letters.map((l) => l.code)).toEqual(['cut', 'a']);
    expect(await queue.redrive('1')).toEqual({ id: '1', bytes: 1 });
    await expect(queue.redrive('2')).rejects.toMatchObject({ code: 'BATON_CONFIG' });
    expect(await queue.purge({ all: true })).toBe(1);
    expect(opened).toEqual([
      'deadLetters.add',
      'deadLetters.add',
      'deadLetters.page',
      'deadLetters.redrive',
      'deadLetters.redrive',
      'deadLetters.redrive',
      'deadLetters.purge',
    ]);
    expect(calls).toEqual([
      'store 7',
      'store 7',
      'newest 7 deadLetters.page',
      'read 7 deadLetters.redrive',
      'remove 7 deadLetters.redrive',
      'read 7 deadLetters.redrive',
      'removeAll 7 deadLetters.purge',
    ]);
  });

  it('rejects a call whose `open` throws, without reaching the shelf', async () => {
    const calls: string[] = [];
    const shelf = shelfOnContext(() => {
      throw new Error('closed');
    }, recording(calls));
    await expect(shelf.store(letter('a', 1))).rejects.toThrow('closed');
    await expect(shelf.removeAll('deadLetters.purge')).rejects.toThrow('closed');
    expect(calls).toEqual([]);
  });
});
