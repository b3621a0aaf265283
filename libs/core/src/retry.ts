/**
 * Retry policy for activities, on p-retry: bounded attempts, exponential backoff with jitter,
 * non-retryable errors, a per-attempt timeout and an AbortSignal that stops everything.
 */
import pRetry, { AbortError } from 'p-retry';
import { ActivityTimeoutError, isNonRetryable } from './errors.js';

export interface RetryPolicy {
  /** Attempts in total, including the first. @defaultValue 3 */
  maxAttempts?: number;
  /** Delay before the first retry. @defaultValue 100 */
  initialDelayMs?: number;
  /** Upper bound of any delay. @defaultValue 10_000 */
  maxDelayMs?: number;
  /** Growth factor between delays. @defaultValue 2 */
  backoffFactor?: number;
  /** Multiply each delay by a random factor in [1, 2) so retries of many runs spread out. @defaultValue true */
  jitter?: boolean;
  /** Error names or codes that are never retried (besides errors whose `retryable` is false). */
  nonRetryable?: string[];
}

export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = {
  maxAttempts: 3,
  initialDelayMs: 100,
  maxDelayMs: 10_000,
  backoffFactor: 2,
  jitter: true,
  nonRetryable: [],
};

export interface AttemptContext {
  attempt: number;
  signal: AbortSignal;
}

export interface RetryOptions {
  policy?: RetryPolicy;
  /** Per-attempt timeout in ms. */
  timeoutMs?: number;
  /** Stops the loop (lease lost, cancel, shutdown); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Name used in timeout errors. */
  name: string;
}

/** Thrown by runWithRetry when it gives up; `attempts` tells how many were made. */
export interface RetryFailure {
  error: unknown;
  attempts: number;
}

/**
 * Calls `fn` until it succeeds, the policy gives up, or `signal` aborts. Resolves with the result
 * and the number of attempts; rejects with a {@link RetryFailure}.
 */
export async function runWithRetry<T>(
  fn: (ctx: AttemptContext) => Promise<T> | T,
  options: RetryOptions,
): Promise<{ result: T; attempts: number }> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const outer = options.signal;
  let attempts = 0;
  try {
    const result = await pRetry(
      async (attempt) => {
        attempts = attempt;
        outer?.throwIfAborted();
        try {
          return await runAttempt(fn, attempt, options.timeoutMs, options.name, outer);
        } catch (err) {
          if (outer?.aborted) throw new AbortError(asError(outer.reason));
          if (isNonRetryable(err) || matchesName(err, policy.nonRetryable))
            throw new AbortError(asError(err));
          throw asError(err);
        }
      },
      {
        retries: Math.max(0, policy.maxAttempts - 1),
        minTimeout: policy.initialDelayMs,
        maxTimeout: policy.maxDelayMs,
        factor: policy.backoffFactor,
        randomize: policy.jitter,
        signal: outer,
        unref: true,
      },
    );
    return { result, attempts };
  } catch (err) {
    const failure: RetryFailure = { error: unwrap(err), attempts: Math.max(attempts, 1) };
    throw failure;
  }
}

async function runAttempt<T>(
  fn: (ctx: AttemptContext) => Promise<T> | T,
  attempt: number,
  timeoutMs: number | undefined,
  name: string,
  outer: AbortSignal | undefined,
): Promise<T> {
  const local = new AbortController();
  const signal = outer ? AbortSignal.any([outer, local.signal]) : local.signal;
  // The user's function may ignore its signal; racing against it makes the timeout and the
  // outer abort take effect anyway.
  let timer: NodeJS.Timeout | undefined;
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  if (timeoutMs !== undefined) {
    timer = setTimeout(() => local.abort(new ActivityTimeoutError(name, timeoutMs)), timeoutMs);
  }
  try {
    return await Promise.race([Promise.resolve().then(() => fn({ attempt, signal })), aborted]);
  } finally {
    if (timer) clearTimeout(timer);
    local.abort();
  }
}

function matchesName(err: unknown, names: readonly string[]): boolean {
  if (names.length === 0 || typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return names.includes(String(e.name)) || names.includes(String(e.code));
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function unwrap(err: unknown): unknown {
  if (err instanceof AbortError) return err.originalError;
  return err;
}
