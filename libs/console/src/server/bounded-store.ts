/**
 * A store whose every call is bounded in time: the console's answer to a store that stops
 * answering (a Redis frozen or partitioned away with its TCP connections still open, a Postgres
 * table locked). Without it a console request waits as long as the client library does, which
 * for ioredis is forever; with it the call fails after `timeoutMs` with {@link StoreTimeoutError}
 * and the console answers 503 with `Retry-After`.
 *
 * Invariants:
 * 1. Every method call that returns a promise settles within `timeoutMs` (plus timer latency):
 *    with the store's own outcome, or with StoreTimeoutError.
 * 2. A call that timed out is not cancelled (no store call can be): it may still take effect when
 *    the store wakes up. Its late outcome is dropped, never reported as unhandled.
 * 3. `connect()` and `close()` are not bounded: connecting has its own timeouts and retries, and
 *    closing is bounded by the CLI (CLOSE_TIMEOUT_MS).
 * 4. The store's capability objects (`runs`, `control`, … and `journalIndex`) are bounded the
 *    same way, a call named `<capability>.<method>` (`runs.list`). Everything else passes through:
 *    synchronous members, `instanceof`, `in` checks for optional capabilities.
 */
import { BatonError } from '@baton/core';
import type { Store } from '@baton/client';
import { DEFAULT_STORE_TIMEOUT_MS } from '../config.js';

/** A store call did not settle within the console's bound; the store may be frozen or unreachable. */
export class StoreTimeoutError extends BatonError {
  constructor(
    /** The store method that was called, with its capability (`runs.list`). */
    readonly method: string,
    /** The bound it exceeded. */
    readonly timeoutMs: number,
  ) {
    super(
      'BATON_STORE_TIMEOUT',
      `the store did not answer ${method}() within ${timeoutMs} ms (BATON_CONSOLE_STORE_TIMEOUT_MS): ` +
        'it may be overloaded, frozen or unreachable; try again shortly, and check the store if it persists',
      { retryable: true, retryAfterMs: timeoutMs },
    );
  }
}

/** Members that are never bounded (invariant 3). */
const UNBOUNDED = new Set<PropertyKey>(['connect', 'close']);
/** The store's capability objects, whose calls are bounded (invariant 4). */
const NESTED = new Set<PropertyKey>([
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

/** `store` with every promise-returning call bounded by `timeoutMs` (see the module's invariants). */
export function boundedStore(store: Store, timeoutMs: number = DEFAULT_STORE_TIMEOUT_MS): Store {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new RangeError(`boundedStore: timeoutMs must be a whole number of ms ≥ 1, got ${timeoutMs}`);
  return bound(store, timeoutMs, '');
}

function bound<T extends object>(target: T, timeoutMs: number, prefix: string): T {
  // One wrapper per member (so `store.runs.list === store.runs.list`), renewed if the member changes.
  const cache = new Map<PropertyKey, { value: unknown; wrapped: unknown }>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      const cached = cache.get(property);
      if (cached !== undefined && cached.value === value) return cached.wrapped;
      let wrapped: unknown;
      if (typeof value === 'function') {
        // Called on the store itself, never on the proxy, so private class fields keep working.
        const call = value as (...args: unknown[]) => unknown;
        const method = `${prefix}${String(property)}`;
        wrapped = UNBOUNDED.has(property)
          ? call.bind(object)
          : (...args: unknown[]): unknown => within(call.apply(object, args), method, timeoutMs);
      } else if (NESTED.has(property) && typeof value === 'object' && value !== null) {
        wrapped = bound(value, timeoutMs, `${String(property)}.`);
      } else {
        return value;
      }
      cache.set(property, { value, wrapped });
      return wrapped;
    },
  });
}

function within(result: unknown, method: string, timeoutMs: number): unknown {
  if (!isThenable(result)) return result;
  const settled = Promise.resolve(result);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(method, timeoutMs)), timeoutMs);
    timer.unref();
  });
  // The store's late outcome, after a timeout, is dropped (invariant 2).
  settled.catch(() => undefined);
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
