/**
 * wrapCalls over the memory adapters and over a small class with private fields: every method call
 * of the adapter and of its capabilities goes through the wrapper, named; everything else reads
 * through as it is on the adapter.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore, memoryTransport } from '../memory/index.js';
import { wrapCalls } from './wrap-calls.js';

/** `adapter` wrapped so that every call's name is recorded, its answer unchanged. */
function recording<A extends object>(adapter: A): { wrapped: A; calls: string[] } {
  const calls: string[] = [];
  const wrapped = wrapCalls(adapter, (name, call) => {
    calls.push(name);
    return call();
  });
  return { wrapped, calls };
}

/** A capability whose methods need their own object: a private field, a getter, a synchronous method. */
class Counter {
  #count = 0;
  readonly label = 'counter';
  get count(): number {
    return this.#count;
  }
  async add(n: number): Promise<number> {
    this.#count += n;
    return this.#count;
  }
  peek(): number {
    return this.#count;
  }
}

/** An adapter with one capability (`runs`, as a store names it) and one member that is none. */
class Adapter {
  readonly name = 'fake';
  readonly runs = new Counter();
  readonly settings = { counter: new Counter() };
  #connected = false;
  async connect(): Promise<void> {
    this.#connected = true;
  }
  isConnected(): boolean {
    return this.#connected;
  }
}

describe('wrapCalls', () => {
  it("names every call of a store and of its capabilities, answering the store's answers", async () => {
    const { wrapped, calls } = recording(memoryStore());
    await wrapped.connect();
    await wrapped.runs.create({
      runId: 'r1',
      workflow: 'w',
      version: 1,
      input: { n: 1 },
      idempotencyKey: null,
    });
    expect((await wrapped.runs.get('r1'))?.input).toEqual({ n: 1 });
    expect(await wrapped.leases.acquire('r1', 'w1', 60_000)).toMatchObject({ ok: true, epoch: 1 });
    expect(await wrapped.journalIndex!.readPointers('r1', 0)).toEqual({ grouped: false, pointers: [] });
    await wrapped.close();
    expect(calls).toEqual([
      'connect',
      'runs.create',
      'runs.get',
      'leases.acquire',
      'journalIndex.readPointers',
      'close',
    ]);
  });

  it("names a transport's calls by its capabilities, and keeps its optional ones as they are", async () => {
    const transport = memoryTransport();
    const { wrapped, calls } = recording(transport);
    await wrapped.connect();
    const position = await wrapped.journal.append({ runId: 'r1', data: new Uint8Array([1]) });
    expect(await wrapped.journal.read('r1', 0)).toMatchObject([{ position }]);
    expect(await wrapped.groupLog!.appendGroupRecord('w1', new Uint8Array([2]))).toBe(1);
    expect(wrapped.journal.supportsOptimisticAppend).toBe(transport.journal.supportsOptimisticAppend);
    expect('groupLog' in wrapped).toBe('groupLog' in transport);
    await wrapped.close();
    expect(calls).toEqual([
      'connect',
      'journal.append',
      'journal.read',
      'groupLog.appendGroupRecord',
      'close',
    ]);
  });

  it("answers what the wrapper answers, the call made with the caller's arguments", async () => {
    const adapter = new Adapter();
    const wrapped = wrapCalls(adapter, (name, call) =>
      name === 'runs.add' ? (call() as Promise<number>).then((n) => `added, now ${n}`) : call(),
    );
    expect(await wrapped.runs.add(2)).toBe('added, now 2');
    expect(await wrapped.runs.add(3)).toBe('added, now 5');
    expect(adapter.runs.peek()).toBe(5);
  });

  it('runs every method and getter on the object itself, so private fields keep working', async () => {
    const adapter = new Adapter();
    const { wrapped, calls } = recording(adapter);
    await wrapped.connect();
    expect(wrapped.isConnected()).toBe(true);
    await wrapped.runs.add(4);
    expect(wrapped.runs.count).toBe(4);
    expect(wrapped.runs.peek()).toBe(4);
    expect(calls).toEqual(['connect', 'isConnected', 'runs.add', 'runs.peek']);
  });

  it('reads everything but methods through: values, other objects, instanceof and in', () => {
    const store = memoryStore();
    const adapter = new Adapter();
    const { wrapped, calls } = recording(adapter);
    expect(wrapped.name).toBe('fake');
    expect(wrapped.runs.label).toBe('counter');
    expect(wrapped).toBeInstanceOf(Adapter);
    expect(wrapped.runs).toBeInstanceOf(Counter);
    // A member that is no capability is the adapter's own object: its calls are not wrapped.
    expect(wrapped.settings).toBe(adapter.settings);
    wrapped.settings.counter.peek();
    expect(calls).toEqual([]);
    const wrappedStore = wrapCalls(store, (_name, call) => call());
    for (const capability of ['presence', 'journalIndex', 'onDataLoss', 'lastDataLoss']) {
      expect(capability in wrappedStore).toBe(capability in store);
    }
    expect(Object.getPrototypeOf(wrappedStore)).toBe(Object.getPrototypeOf(store));
  });

  it('hands out one wrapper per member, and a new one when the member changes', () => {
    const adapter = new Adapter() as Adapter & { extra?: () => string };
    const { wrapped, calls } = recording(adapter);
    expect(wrapped.runs).toBe(wrapped.runs);
    expect(wrapped.runs.add).toBe(wrapped.runs.add);
    expect(wrapped.connect).toBe(wrapped.connect);
    adapter.extra = () => 'first';
    const first = wrapped.extra!;
    expect(wrapped.extra).toBe(first);
    adapter.extra = () => 'second';
    expect(wrapped.extra).not.toBe(first);
    expect(wrapped.extra!()).toBe('second');
    expect(calls).toEqual(['extra']);
  });
});
