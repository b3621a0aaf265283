/**
 * Test doubles over an adapter's capabilities (a transport's `runQueue`, a store's `leases`,
 * `fleet`, …): a fault or a probe in one method, the rest real.
 */

/**
 * `adapter` with the members of `replace` put in place of its capability `key`'s own (the
 * others, and the rest of the adapter, are the real ones).
 *
 * @example
 * const store = withCapability(memoryStore(), 'fleet', { report: async () => { throw new Error('down'); } });
 */
export function withCapability<A extends object, K extends keyof A & string>(
  adapter: A,
  key: K,
  replace: Partial<A[K]>,
): A {
  const inner = adapter[key] as object;
  const capability = new Proxy(inner, {
    get: (target, prop, receiver) =>
      Object.hasOwn(replace, prop) ? replace[prop as keyof A[K]] : Reflect.get(target, prop, receiver),
  });
  return new Proxy(adapter, {
    get(target, prop, receiver) {
      if (prop === key) return capability;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
