/**
 * boundedStore over a store whose calls can be made to hang: a hung call fails with
 * StoreTimeoutError naming the method and the bound; everything else passes through unchanged.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { memoryStore } from '@baton/core/memory';
import { StoreTimeoutError, boundedStore } from './bounded-store.js';

/** The memory store with `capability.method` hanging forever (a frozen server). */
function frozenWhere(store: Store, capability: keyof Store, method: string): Store {
  const never = (): Promise<never> => new Promise(() => undefined);
  const frozen = { ...(store[capability] as object), [method]: never };
  return new Proxy(store, {
    get(target, property) {
      if (property === capability) return frozen;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('boundedStore', () => {
  it('fails a call that does not settle in time with StoreTimeoutError, naming the method and the bound', async () => {
    const store = boundedStore(frozenWhere(memoryStore(), 'runs', 'list'), 50);
    const err = await store.runs.list({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeoutError);
    expect(err).toMatchObject({
      code: 'BATON_STORE_TIMEOUT',
      method: 'runs.list',
      timeoutMs: 50,
      retryable: true,
    });
    expect((err as Error).message).toMatch(
      /did not answer runs\.list\(\) within 50 ms \(BATON_CONSOLE_STORE_TIMEOUT_MS\)/,
    );
  });

  it('passes results, errors and synchronous members through, on the store itself', async () => {
    const inner = memoryStore();
    const store = boundedStore(inner, 1_000);
    await store.connect();
    await store.runs.create({
      runId: 'r1',
      workflow: 'w',
      version: 1,
      input: { n: 1 },
      idempotencyKey: null,
    });
    expect((await store.runs.get('r1'))?.input).toEqual({ n: 1 });
    expect(store.runs.list).toBe(store.runs.list);
    const refused = await store.runs
      .create({ runId: '', workflow: 'w', version: 1, input: {}, idempotencyKey: null })
      .then(
        () => 'created',
        (e: unknown) => e,
      );
    expect(refused).not.toBeInstanceOf(StoreTimeoutError);
    expect(Object.getPrototypeOf(store)).toBe(Object.getPrototypeOf(inner));
    await store.close();
  });

  it('bounds every capability, naming the call with its capability', async () => {
    for (const [capability, method, call] of [
      ['leases', 'acquire', (s: Store) => s.leases.acquire('r1', 'w', 1_000)],
      ['control', 'requestCancel', (s: Store) => s.control.requestCancel('r1')],
      ['checkpoints', 'load', (s: Store) => s.checkpoints.load('r1')],
      ['fleet', 'list', (s: Store) => s.fleet.list()],
      ['payloads', 'get', (s: Store) => s.payloads.get('r1', 'h')],
    ] as const) {
      const store = boundedStore(frozenWhere(memoryStore(), capability, method), 50);
      await expect(call(store)).rejects.toMatchObject({
        code: 'BATON_STORE_TIMEOUT',
        method: `${capability}.${method}`,
      });
    }
  });

  it('bounds the journalIndex capability too', async () => {
    const hung = { journalIndex: { readPointers: (): Promise<never> => new Promise(() => undefined) } };
    const store = boundedStore(hung as unknown as Store, 50);
    await expect(store.journalIndex!.readPointers('r1', 0)).rejects.toMatchObject({
      code: 'BATON_STORE_TIMEOUT',
      method: 'journalIndex.readPointers',
    });
  });

  it('refuses a bound that is not a whole number of ms', () => {
    expect(() => boundedStore(memoryStore(), 0)).toThrow(/timeoutMs must be a whole number of ms ≥ 1, got 0/);
  });
});
