/**
 * Retry policy for activities, on p-retry: bounded attempts, exponential backoff with jitter,
 * non-retryable errors, a per-attempt timeout and an AbortSignal that stops everything.
 */
import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * Awaited before each retry, outside its timeout (an activity's rate limit). A rejection while
   * `signal` is aborted ends the loop with the signal's reason; any other fails the attempt.
   */
  beforeRetry?: (() => Promise<void>) | undefined;
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
  const outer = options.signal;

  // First attempt without the retry machinery: it is the hot path, and most attempts succeed.
  let firstError: unknown;
  try {
    outer?.throwIfAborted();
    return { result: await runAttempt(fn, 1, options.timeoutMs, options.name, outer), attempts: 1 };
  } catch (err) {
    if (outer?.aborted) throw giveUp(outer.reason, 1);
    const policy = resolvedPolicy(options.policy);
    if (policy.maxAttempts <= 1 || isNonRetryable(err) || matchesName(err, policy.nonRetryable)) {
      throw giveUp(err, 1);
    }
    firstError = err;
  }
  const policy = resolvedPolicy(options.policy);

  // Attempts 2..maxAttempts through p-retry. Its first try runs at once, so the first backoff
  // (initialDelayMs) is slept here and p-retry's delays start one factor later.
  let attempts = 1;
  try {
    await backoff(firstDelayMs(policy), outer);
    const result = await pRetry(
      async (retry) => {
        attempts = retry + 1;
        outer?.throwIfAborted();
        try {
          if (options.beforeRetry) await options.beforeRetry();
          return await runAttempt(fn, attempts, options.timeoutMs, options.name, outer);
        } catch (err) {
          if (outer?.aborted) throw new AbortError(asError(outer.reason));
          if (isNonRetryable(err) || matchesName(err, policy.nonRetryable))
            throw new AbortError(asError(err));
          throw asError(err);
        }
      },
      {
        retries: policy.maxAttempts - 2,
        minTimeout: policy.initialDelayMs * policy.backoffFactor,
        maxTimeout: policy.maxDelayMs,
        factor: policy.backoffFactor,
        randomize: policy.jitter,
        signal: outer,
        unref: true,
      },
    );
    return { result, attempts };
  } catch (err) {
    throw giveUp(attempts === 1 && !outer?.aborted ? firstError : unwrap(err), attempts);
  }
}

function giveUp(error: unknown, attempts: number): RetryFailure {
  return { error, attempts };
}

function resolvedPolicy(policy: RetryPolicy | undefined): Required<RetryPolicy> {
  return { ...DEFAULT_RETRY_POLICY, ...policy };
}

function firstDelayMs(policy: Required<RetryPolicy>): number {
  const jittered = policy.jitter ? policy.initialDelayMs * (1 + Math.random()) : policy.initialDelayMs;
  return Math.min(jittered, policy.maxDelayMs);
}

/** Waits `ms` without holding the process open; an abort rejects with the signal's own reason. */
async function backoff(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, { signal, ref: false }).catch((err: unknown) => {
    throw signal?.aborted ? signal.reason : err;
  });
}

function runAttempt<T>(
  fn: (ctx: AttemptContext) => Promise<T> | T,
  attempt: number,
  timeoutMs: number | undefined,
  name: string,
  outer: AbortSignal | undefined,
): Promise<T> {
  // Only a timeout needs a signal of the attempt's own; otherwise the outer one is handed on.
  let timer: NodeJS.Timeout | undefined;
  let signal = outer;
  if (timeoutMs !== undefined) {
    const local = new AbortController();
    signal = outer ? AbortSignal.any([outer, local.signal]) : local.signal;
    timer = setTimeout(() => local.abort(new ActivityTimeoutError(name, timeoutMs)), timeoutMs);
  }
  // Nothing can abort the attempt: no listener, no race.
  if (signal === undefined) return callAttempt(fn, attempt, NEVER_ABORTED);
  const attemptSignal = signal;
  if (attemptSignal.aborted) {
    clearTimeout(timer);
    return Promise.reject(attemptSignal.reason as Error);
  }
  // The user's function may ignore its signal; settling on the abort as well makes the timeout
  // and the outer abort take effect anyway. Without a timeout the attempt waits on the run's own
  // signal, which every attempt of the run shares: it joins that signal's one watcher instead of
  // adding and removing an EventTarget listener of its own (which cost more than the rest of
  // the attempt's bookkeeping together).
  if (timer === undefined) {
    return new Promise<T>((resolve, reject) => {
      const watching = watchAbort(attemptSignal, reject);
      callAttempt(fn, attempt, attemptSignal).then(
        (value) => {
          watching.delete(reject);
          resolve(value);
        },
        (err: unknown) => {
          watching.delete(reject);
          reject(err as Error);
        },
      );
    });
  }
  // One promise and one listener per attempt that has a timeout (its signal is its own).
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(attemptSignal.reason as Error);
    };
    const settled = (): void => {
      clearTimeout(timer);
      attemptSignal.removeEventListener('abort', onAbort);
    };
    attemptSignal.addEventListener('abort', onAbort, { once: true });
    callAttempt(fn, attempt, attemptSignal).then(
      (value) => {
        settled();
        resolve(value);
      },
      (err: unknown) => {
        settled();
        reject(err as Error);
      },
    );
  });
}

/** The attempts waiting on a signal, each by its reject; one listener per signal rejects them all. */
const abortWatchers = new WeakMap<AbortSignal, Set<(reason: Error) => void>>();

/** Adds `reject` to the attempts `signal` rejects when it aborts; the caller removes it once settled. */
function watchAbort(signal: AbortSignal, reject: (reason: Error) => void): Set<(reason: Error) => void> {
  let watching = abortWatchers.get(signal);
  if (watching === undefined) {
    const waiting = new Set<(reason: Error) => void>();
    signal.addEventListener(
      'abort',
      () => {
        abortWatchers.delete(signal);
        for (const rejectAttempt of waiting) rejectAttempt(signal.reason as Error);
        waiting.clear();
      },
      { once: true },
    );
    abortWatchers.set(signal, waiting);
    watching = waiting;
  }
  watching.add(reject);
  return watching;
}

/** Calls the attempt; a synchronous throw becomes a rejection. */
function callAttempt<T>(
  fn: (ctx: AttemptContext) => Promise<T> | T,
  attempt: number,
  signal: AbortSignal,
): Promise<T> {
  try {
    return Promise.resolve(fn({ attempt, signal }));
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

/** Handed to attempts that run with neither an outer signal nor a timeout. */
const NEVER_ABORTED = new AbortController().signal;

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
