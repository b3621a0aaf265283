/**
 * In-process stand-ins for a process dying: wrap the transport and store a worker uses, and
 * `sever()` makes every later call on them hang forever, as if the process had been SIGKILLed
 * between two instructions. Nothing the worker does after that reaches the shared adapters:
 * its leases stop being renewed and expire, its unacked messages are redelivered.
 *
 * Import from `@baton/testing/severable`. Only for the embedded demo and unit tests; crash tests on real servers kill real processes.
 */
import type { RunQueue, Store, Transport } from '@baton/core/adapter';

export interface Severable<T> {
  /** The wrapped adapter to hand to the worker. */
  readonly adapter: T;
  /** Cuts the adapter off: calls in flight never settle, later calls hang. */
  sever(): void;
  readonly severed: boolean;
}

const hang = (): Promise<never> => new Promise<never>(() => undefined);

/**
 * Capabilities an adapter keeps in an object of their own (the bus's run queue, journal, dead
 * letters and group log; the store's leases, control, checkpoints, runs, … and journal index): cut
 * off with the adapter, so a "dead" worker reaches nothing through any of them.
 */
const NESTED_CAPABILITIES: ReadonlySet<PropertyKey> = new Set([
  'runQueue',
  'journal',
  'deadLetters',
  'groupLog',
  'leases',
  'control',
  'checkpoints',
  'runs',
  'timers',
  'signals',
  'presence',
  'retention',
  'payloads',
  'fleet',
  'schedules',
  'concurrency',
  'rateLimits',
  'journalIndex',
]);

function severable<T extends object>(target: T, keepAlive: ReadonlySet<PropertyKey>): Severable<T> {
  let severed = false;
  // One proxy per nested capability object, so `adapter.groupLog === adapter.groupLog` holds as
  // it does on the adapter itself, and hot paths do not build a proxy per access.
  const proxies = new WeakMap<object, object>();
  const cut = <O extends object>(obj: O): O => {
    const known = proxies.get(obj);
    if (known !== undefined) return known as O;
    const proxy = new Proxy(obj, {
      get(inner, prop, receiver) {
        const value = Reflect.get(inner, prop, receiver) as unknown;
        if (NESTED_CAPABILITIES.has(prop) && typeof value === 'object' && value !== null) return cut(value);
        if (typeof value !== 'function' || keepAlive.has(prop)) return value;
        return (...args: unknown[]) => {
          if (severed) return hang();
          const result = (value as (...a: unknown[]) => unknown).apply(inner, args);
          if (result instanceof Promise) {
            // A reply that arrives after the "crash" is never seen by the dead process.
            return result.then(
              (v) => (severed ? hang() : v),
              (e: unknown) => (severed ? hang() : Promise.reject(e)),
            );
          }
          return result;
        };
      },
    });
    proxies.set(obj, proxy);
    return proxy;
  };
  return {
    adapter: cut(target),
    sever: () => {
      severed = true;
    },
    get severed() {
      return severed;
    },
  };
}

/** Wraps a transport so that a simulated crash cuts the worker off from it. */
export function severableTransport(transport: Transport): Severable<Transport> {
  const wrapped = severable(transport, new Set<PropertyKey>(['name', 'fetch']));
  const fetch: RunQueue['fetch'] = async (options) => {
    if (wrapped.severed) return hang();
    const deliveries = await transport.runQueue.fetch(options);
    if (wrapped.severed) return hang();
    // Acks and naks of a dead process never reach the bus either.
    return deliveries.map((d) => ({
      ...d,
      ack: () => (wrapped.severed ? hang() : d.ack()),
      nak: (delayMs?: number) => (wrapped.severed ? hang() : d.nak(delayMs)),
    }));
  };
  const runQueue = new Proxy(wrapped.adapter.runQueue, {
    get: (obj, prop, receiver) => (prop === 'fetch' ? fetch : Reflect.get(obj, prop, receiver)),
  });
  const adapter = new Proxy(wrapped.adapter, {
    get: (obj, prop, receiver) => (prop === 'runQueue' ? runQueue : Reflect.get(obj, prop, receiver)),
  });
  return {
    adapter,
    sever: wrapped.sever,
    get severed() {
      return wrapped.severed;
    },
  };
}

/** Wraps a store so that a simulated crash cuts the worker off from it. */
export function severableStore(store: Store): Severable<Store> {
  return severable(store, new Set<PropertyKey>(['name']));
}
