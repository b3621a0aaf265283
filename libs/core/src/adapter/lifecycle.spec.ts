import { describe, expect, it, vi } from 'vitest';
import { BatonError } from '../shared/errors.js';
import { AdapterLifecycle, guardClosed, type OperationRunner, type OperationsOf } from './lifecycle.js';

const names = { adapter: 'test adapter', connectHint: 'connect it first', closedHint: 'make a new one' };

describe('AdapterLifecycle', () => {
  it('sets up once for concurrent connects, then hands out the open state', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    const setUp = vi.fn(async () => ({ id: 1 }));
    await Promise.all([lifecycle.connect(setUp, async () => {}), lifecycle.connect(setUp, async () => {})]);
    await lifecycle.connect(setUp, async () => {});
    expect(setUp).toHaveBeenCalledTimes(1);
    expect(lifecycle.state).toBe('open');
    expect(lifecycle.open('read')).toEqual({ id: 1 });
  });

  it('names the operation and what to do before connect() succeeded, and lets a failed connect be retried', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    expect(() => lifecycle.open('read')).toThrow(
      expect.objectContaining({
        code: 'BATON_NOT_CONNECTED',
        message: 'test adapter: read called before connect() succeeded; connect it first',
      }),
    );
    await expect(
      lifecycle.connect(
        () => Promise.reject(new Error('refused')),
        async () => {},
      ),
    ).rejects.toThrow('refused');
    expect(lifecycle.state).toBe('created');
    await lifecycle.connect(
      async () => ({ id: 2 }),
      async () => {},
    );
    expect(lifecycle.open('read')).toEqual({ id: 2 });
  });

  it('is closed from the call on; a connect that lands afterwards releases what it made and fails', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    let finish!: (value: { id: number }) => void;
    const release = vi.fn(async () => {});
    const connecting = lifecycle.connect(() => new Promise((resolve) => (finish = resolve)), release);
    const tearDown = vi.fn(async () => {});
    const closing = lifecycle.close(tearDown);
    expect(lifecycle.state).toBe('closed');
    finish({ id: 3 });
    await expect(connecting).rejects.toMatchObject({
      code: 'BATON_CLOSED',
      message: 'test adapter: connect called after close(); make a new one',
    });
    await closing;
    expect(release).toHaveBeenCalledWith({ id: 3 });
    expect(tearDown).toHaveBeenCalledWith(undefined);
    expect(() => lifecycle.open('read')).toThrow(expect.objectContaining({ code: 'BATON_CLOSED' }));
    await expect(lifecycle.connect(async () => ({ id: 4 }), release)).rejects.toMatchObject({
      code: 'BATON_CLOSED',
    });
  });

  it('tears down what it opened, once, however often close() is called', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    await lifecycle.connect(
      async () => ({ id: 5 }),
      async () => {},
    );
    const tearDown = vi.fn(async () => {});
    await Promise.all([lifecycle.close(tearDown), lifecycle.close(tearDown)]);
    expect(tearDown).toHaveBeenCalledTimes(1);
    expect(tearDown).toHaveBeenCalledWith({ id: 5 });
    expect(lifecycle.peek()).toEqual({ id: 5 });
  });

  it('hands a guarded operation the open state without a second closed check, and refuses before connect()', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    // The BATON_NOT_CONNECTED error `open` throws (above): `open` asks `connected` for it.
    expect(() => lifecycle.connected('journal.append')).toThrow(
      /^test adapter: journal\.append called before connect\(\) succeeded; connect it first$/,
    );
    await lifecycle.connect(
      async () => ({ id: 7 }),
      async () => {},
    );
    expect(lifecycle.connected('journal.append')).toEqual({ id: 7 });
    const journal = lifecycle.guard('journal', {
      append: async () => lifecycle.connected('journal.append').id,
    });
    expect(await journal.append()).toBe(7);
    await lifecycle.close(async () => {});
    // The guard's check is the one that refuses; `open` checks again for work after an await.
    await expect(journal.append()).rejects.toMatchObject({
      code: 'BATON_CLOSED',
      message: 'test adapter: journal.append called after close(); make a new one',
    });
    expect(() => lifecycle.open('journal.read')).toThrow(expect.objectContaining({ code: 'BATON_CLOSED' }));
  });

  it("connects on first use through the adapter's connect(), once, then answers at once", async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    const setUp = vi.fn(async () => ({ id: 6 }));
    const connect = vi.fn(() => lifecycle.connect(setUp, async () => {}));
    const [a, b] = await Promise.all([
      lifecycle.openOrConnect('read', connect),
      lifecycle.openOrConnect('write', connect),
    ]);
    expect(a).toEqual({ id: 6 });
    expect(b).toEqual({ id: 6 });
    expect(setUp).toHaveBeenCalledTimes(1);
    expect(await lifecycle.openOrConnect('read', connect)).toEqual({ id: 6 });
    expect(connect).toHaveBeenCalledTimes(2);
  });

  it('passes on a failed first-use connect, and names the operation once closed', async () => {
    const lifecycle = new AdapterLifecycle<{ id: number }>(names);
    const refused = new Error('refused');
    const failing = (): Promise<void> =>
      lifecycle.connect(
        () => Promise.reject(refused),
        async () => {},
      );
    await expect(lifecycle.openOrConnect('read', failing)).rejects.toBe(refused);
    expect(lifecycle.state).toBe('created');

    let finish!: (value: { id: number }) => void;
    const pending = lifecycle.openOrConnect('write', () =>
      lifecycle.connect(
        () => new Promise((resolve) => (finish = resolve)),
        async () => {},
      ),
    );
    const closing = lifecycle.close(async () => {});
    finish({ id: 7 });
    const err = await pending.catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'BATON_CLOSED',
      message: 'test adapter: write called after close(); make a new one',
      cause: { code: 'BATON_CLOSED', message: 'test adapter: connect called after close(); make a new one' },
    });
    await closing;
    const connect = vi.fn(async () => {});
    await expect(lifecycle.openOrConnect('read', connect)).rejects.toMatchObject({
      code: 'BATON_CLOSED',
      message: 'test adapter: read called after close(); make a new one',
    });
    expect(connect).not.toHaveBeenCalled();
  });
});

class Counter {
  readonly kind = 'counter';
  private count = 0;
  constructor(private readonly read: () => number) {}
  async add(n: number): Promise<number> {
    this.count += n;
    return this.count;
  }
  /** Throws before it returns a promise, as an adapter's method does before connect(). */
  fail(): Promise<number> {
    throw new BatonError('BATON_NOT_CONNECTED', 'connect first');
  }
  /** Answers on a closed owner. */
  async peek(): Promise<number> {
    return this.read() + this.count;
  }
}

describe('guardClosed', () => {
  it('rejects every method but the exempt ones once the owner is closed, and runs them on the capability', async () => {
    let closed = false;
    const inner = new Counter(() => 100);
    const guarded = guardClosed(
      'counter',
      inner,
      (operation) => {
        if (closed) throw new BatonError('BATON_CLOSED', `${operation} called after close()`);
      },
      ['peek'],
    );
    expect(guarded.kind).toBe('counter');
    expect(await guarded.add(2)).toBe(2);
    expect(await inner.add(1)).toBe(3);
    const failed = guarded.fail();
    expect(failed).toBeInstanceOf(Promise);
    await expect(failed).rejects.toMatchObject({ code: 'BATON_NOT_CONNECTED' });
    closed = true;
    await expect(guarded.add(1)).rejects.toMatchObject({
      code: 'BATON_CLOSED',
      message: 'counter.add called after close()',
    });
    expect(await guarded.peek()).toBe(103);
  });
});

/** A capability of the contract's kind, for bindAll: its methods answer promises. */
interface Tally {
  add(n: number): Promise<number>;
  total(): Promise<number>;
  /** Not an operation: left out of the module's operations. */
  readonly unit: string;
}

describe('AdapterLifecycle.bindAll', () => {
  it('binds each module of a record under its key, every call through the one runner as <key>.<method>', async () => {
    const lifecycle = new AdapterLifecycle<{ sum: number }>(names);
    const state = { sum: 0 };
    // Written against the contract: the state first, then the method's own arguments; an answer or a promise.
    const tally: OperationsOf<{ sum: number }, Tally> = {
      add: (s, n) => (s.sum += n),
      total: async (s) => s.sum,
    };
    const ran: string[] = [];
    const run: OperationRunner<{ sum: number }> = async (operation, work) => {
      ran.push(operation);
      if (operation === 'other.total' && state.sum > 5) throw new Error(`${operation} refused`);
      return work(state);
    };
    const bound = lifecycle.bindAll({ tally, other: { total: tally.total } }, run);
    expect(await bound.tally.add(2)).toBe(2);
    expect(await bound.tally.add(4)).toBe(6);
    expect(await bound.tally.total()).toBe(6);
    await expect(bound.other.total()).rejects.toThrow('other.total refused');
    expect(ran).toEqual(['tally.add', 'tally.add', 'tally.total', 'other.total']);
    expect(Object.keys(bound.tally).sort()).toEqual(['add', 'total']);
  });
});
