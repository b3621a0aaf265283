/**
 * A rule put around every call an adapter answers, written once for the kits that need one: the
 * console bounds each store call in time (boundedStore), the test kit cuts a "crashed" worker off
 * its adapters (severable). Either way the adapter is walked the same: its own methods and those
 * of its capability objects.
 *
 * Invariants:
 * 1. Every method call on the adapter, and on its capability objects (the transport's `runQueue`,
 *    `journal`, `deadLetters`, `groupLog`; the store's `leases`, `control`, … `journalIndex`), goes
 *    through `wrap(name, call)`, named `<method>` on the adapter (`connect`) and
 *    `<capability>.<method>` on a capability (`runs.list`). What `wrap` returns is the call's
 *    answer. `call()` runs the method on the object itself (never on the wrapper, so private class
 *    fields keep working) with the caller's arguments, and answers what it answers.
 * 2. `wrap` sees synchronous methods too (`onDataLoss`): it tells them by their answer, which is no
 *    promise, and lets that through unless its rule says otherwise.
 * 3. Everything else reads through unchanged: flags and names, the objects of other members,
 *    `instanceof`, and `in` checks, so an optional capability (`presence`, `journalIndex`,
 *    `groupLog`) is on the wrapped adapter exactly when it is on the adapter. Getters run on the
 *    object itself.
 * 4. One wrapper per member: `wrapped.runs === wrapped.runs`, `wrapped.runs.list ===
 *    wrapped.runs.list`; a member that changes on the adapter is wrapped anew.
 */
import type { Store } from '../adapter/contracts/store.js';
import type { Transport } from '../adapter/contracts/transport.js';

/** The members of `A` that hold an object of methods (a capability), not a method or a value. */
type CapabilityNames<A> = {
  [K in keyof A]-?: NonNullable<A[K]> extends (...args: never[]) => unknown
    ? never
    : NonNullable<A[K]> extends object
      ? K
      : never;
}[keyof A];

/**
 * The capabilities of a transport and of a store, by their contracts: a capability added to either
 * contract fails to compile here until it is listed.
 */
const CAPABILITIES: Record<CapabilityNames<Transport> | CapabilityNames<Store>, true> = {
  runQueue: true,
  journal: true,
  deadLetters: true,
  groupLog: true,
  runStreams: true,
  leases: true,
  control: true,
  checkpoints: true,
  runs: true,
  attributes: true,
  timers: true,
  signals: true,
  updates: true,
  presence: true,
  retention: true,
  payloads: true,
  fleet: true,
  schedules: true,
  concurrency: true,
  rateLimits: true,
  promises: true,
  queries: true,
  journalIndex: true,
};

/**
 * `adapter` with every method call of its own and of its capabilities made through `wrap` (see the
 * module's invariants).
 *
 * @example
 * // Every store call logged with its name (`runs.get`), its answer unchanged.
 * const logged = wrapCalls(store, (name, call) => {
 *   console.log(name);
 *   return call();
 * });
 */
export function wrapCalls<A extends object>(
  adapter: A,
  wrap: (name: string, call: () => unknown) => unknown,
): A {
  return wrapMembers(adapter, '', wrap);
}

/** `target` with its methods wrapped, named `<prefix><method>`; on the adapter (no prefix), its capabilities too. */
function wrapMembers<T extends object>(
  target: T,
  prefix: string,
  wrap: (name: string, call: () => unknown) => unknown,
): T {
  const cache = new Map<PropertyKey, { value: unknown; wrapped: unknown }>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      const known = cache.get(property);
      if (known !== undefined && known.value === value) return known.wrapped;
      let wrapped: unknown;
      if (typeof value === 'function') {
        const method = value as (...args: unknown[]) => unknown;
        const name = `${prefix}${String(property)}`;
        wrapped = (...args: unknown[]): unknown => wrap(name, () => method.apply(object, args));
      } else if (prefix === '' && isCapability(property) && typeof value === 'object' && value !== null) {
        wrapped = wrapMembers(value, `${property}.`, wrap);
      } else {
        return value;
      }
      cache.set(property, { value, wrapped });
      return wrapped;
    },
  });
}

function isCapability(property: PropertyKey): property is string {
  return typeof property === 'string' && Object.hasOwn(CAPABILITIES, property);
}
