/**
 * The client's own retries of a bus or store that is briefly unavailable (a NATS or Kafka leader
 * election, a Redis failover, a reconnect): start, signal, cancel, pause and resume try again, with
 * backoff and jitter (p-retry), for a bounded time (`ClientOptions.retryUnavailableMs`), instead
 * of handing the producer an error it would have to retry itself.
 *
 * Invariants:
 * 1. Only an error that says it is retryable (`retryable: true`: a BackendUnavailableError of any
 *    bus or store, a replication not yet confirmed) is tried again. Any other (refused
 *    credentials, a payload too large, a run not found) fails the call at once, unchanged.
 * 2. Every attempt sends the same message: it is built once, before the first, so its run id,
 *    de-duplication id (`start:<runId>`, `signal:<runId>:<signalId>`) and bytes never change. An
 *    attempt that reached the bus before its answer was lost is therefore de-duplicated (by message
 *    id on NATS, by run id and signal id in the store on any bus): a retry never makes a second run
 *    or delivers a signal twice. The store calls retried (control.requestCancel, control.requestPause, control.resume)
 *    leave the same state when repeated.
 * 3. No attempt starts after the bound; the error then is {@link RetriesExhaustedError}, naming
 *    the call, the attempts, the time spent and (as `cause`) the last error. A bound of 0 makes one
 *    attempt and throws its error unchanged.
 */
import { BatonError } from '@baton/core';
import pRetry from 'p-retry';

/** The default of `ClientOptions.retryUnavailableMs`: about a leader election and a reconnect. */
export const DEFAULT_RETRY_UNAVAILABLE_MS = 30_000;
/** First delay between attempts; doubled (with jitter, x1 to x2) up to {@link MAX_RETRY_DELAY_MS}. */
const FIRST_RETRY_DELAY_MS = 100;
/** Longest delay between two attempts, so a bus back after 10 s is used within about 2 s. */
const MAX_RETRY_DELAY_MS = 2_000;

/**
 * The bus or store stayed unavailable for the whole of the client's retries. Retryable still: the
 * call is safe to repeat later with the same run id, idempotency key or signal id.
 */
export class RetriesExhaustedError extends BatonError {
  constructor(
    /** The call, e.g. `client.start(run 7f3…)`. */
    readonly operation: string,
    /** Attempts made, the first included. */
    readonly attempts: number,
    /** Time from the first attempt to the last failure (ms). */
    readonly elapsedMs: number,
    cause: unknown,
  ) {
    const last =
      cause instanceof Error
        ? `${(cause as { code?: unknown }).code ?? cause.name}: ${cause.message}`
        : String(cause);
    super(
      'BATON_RETRIES_EXHAUSTED',
      `${operation} failed ${attempts} times over ${(elapsedMs / 1_000).toFixed(1)} s, the bus or store still ` +
        `unavailable (last error: ${last}). Each attempt sent the same message, so calling it again with the same ` +
        'run id, idempotency key or signal id is safe; raise the client option retryUnavailableMs to wait longer',
      { cause, retryable: true },
    );
  }
}

/** True when `err` says it is worth trying again (invariant 1). */
function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === true;
}

/**
 * Calls `attempt` until it succeeds, fails with an error that is not retryable (thrown as it is),
 * or `boundMs` have passed since the first call ({@link RetriesExhaustedError}).
 */
export async function retryUnavailable<T>(
  operation: string,
  boundMs: number,
  attempt: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let attempts = 0;
  try {
    return await pRetry(
      () => {
        attempts += 1;
        return attempt();
      },
      {
        retries: Number.POSITIVE_INFINITY,
        maxRetryTime: boundMs,
        minTimeout: FIRST_RETRY_DELAY_MS,
        maxTimeout: MAX_RETRY_DELAY_MS,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) => isRetryable(error),
      },
    );
  } catch (err) {
    if (attempts <= 1 || !isRetryable(err)) throw err;
    throw new RetriesExhaustedError(operation, attempts, performance.now() - started, err);
  }
}
