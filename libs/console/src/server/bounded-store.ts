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
 *    closing is bounded by the CLI (CLOSE_TIMEOUT_MS); nor is `queries.ask`, which waits for a
 *    worker's answer as long as the query's own timeout says.
 * 4. The store's capability objects (`runs`, `control`, … and `journalIndex`) are bounded the
 *    same way, a call named `<capability>.<method>` (`runs.list`). Everything else passes through:
 *    synchronous members, `instanceof`, `in` checks for optional capabilities (the walk is core's
 *    `wrapCalls`, shared with the test kit's severable adapters).
 */
import { BatonError } from '@baton/core';
import { wrapCalls, type Store } from '@baton/client';
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

/**
 * Calls that are never bounded (invariant 3), and a query's ask, which waits for a worker's answer
 * by design and is bounded by the query's own timeout (the API cuts it to its longest wait).
 */
const UNBOUNDED = new Set<string>(['connect', 'close', 'queries.ask']);

/** `store` with every promise-returning call bounded by `timeoutMs` (see the module's invariants). */
export function boundedStore(store: Store, timeoutMs: number = DEFAULT_STORE_TIMEOUT_MS): Store {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new RangeError(`boundedStore: timeoutMs must be a whole number of ms ≥ 1, got ${timeoutMs}`);
  return wrapCalls(store, (method, call) =>
    UNBOUNDED.has(method) ? call() : within(call(), method, timeoutMs),
  );
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
