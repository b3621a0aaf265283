/**
 * Rate limits (`defineRateLimit({ name, limit, per })`, named by an activity's `rateLimit`): at most
 * `limit` grants per window of `perMs`, fleet-wide, for one name and key. The store keeps, per name
 * and key, the times of the grants still inside the window (a sliding log).
 *
 * Invariants (each store keeps them atomically, per name and key):
 * 1. In any interval of `perMs` on the store's clock, at most `limit` requests are granted (for
 *    requests that all carry the same `limit` and `perMs`). A grant is recorded at the store's time
 *    of the call, never at a time a worker supplied, so workers' clock skew cannot widen the window.
 * 2. A refused request records nothing: asking again costs nobody a place. Its `waitMs` is the time
 *    until the oldest grant that must leave the window for a place to free does so; asking again
 *    earlier is refused again. Nothing is promised to the refused caller: whoever asks first once a
 *    place frees gets it (no line; see docs/rate-limits.md on fairness).
 * 3. `limit` and `perMs` come with each call (the activity's, as the calling worker's code defines
 *    it): a lower limit or a longer window takes effect at once for what the store still holds;
 *    grants older than a call's window are forgotten by that call.
 *
 * Left out on purpose: reservations of future places (a caller that died would hold a place it
 * never uses) and listing the names in use.
 */

import { ConfigError } from '../../shared/errors.js';

/** One ask for a place under a limit. */
export interface RateLimitRequest {
  /** The limit's name (as `defineRateLimit` checked it). */
  name: string;
  /** The key within the limit (`''` for a limit without one); 0-256 characters. */
  key: string;
  /** Grants allowed per window: an integer in 1..{@link MAX_RATE_LIMIT}. */
  limit: number;
  /** The window's length in ms: an integer in 1..{@link MAX_RATE_WINDOW_MS}. */
  perMs: number;
}

/** What {@link RateLimitStore.take} decided. */
export interface RateLimitAnswer {
  granted: boolean;
  /** 0 when granted; otherwise ms (on the store's clock) until asking again may be granted, ≥ 1. */
  waitMs: number;
}

export interface RateLimitStore {
  /** Grants a place now (recording it) or says how long until one frees (invariants 1-3). */
  take(request: RateLimitRequest): Promise<RateLimitAnswer>;
}

/** Largest `limit`: the store holds up to this many grant times per name and key. */
export const MAX_RATE_LIMIT = 10_000;
/** Longest window: one day. A longer quota is better kept by the API's owner than in a log of grants. */
export const MAX_RATE_WINDOW_MS = 86_400_000;
/** Longest key within a limit. */
export const MAX_RATE_LIMIT_KEY_LENGTH = 256;
/** Allowed names: the same characters as activity and workflow names. */
export const RATE_LIMIT_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Why a limit's numbers are unusable, or undefined when they are fine. Shared by `defineRateLimit`
 * and {@link checkRateLimitRequest}, so the two never disagree.
 */
export function rateLimitProblem(limit: unknown, perMs: unknown): string | undefined {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_RATE_LIMIT) {
    return `limit ${String(limit)} is not an integer in 1..${MAX_RATE_LIMIT}`;
  }
  if (typeof perMs !== 'number' || !Number.isInteger(perMs) || perMs < 1 || perMs > MAX_RATE_WINDOW_MS) {
    return `per ${String(perMs)} ms is not a whole number of milliseconds in 1..${MAX_RATE_WINDOW_MS} (one day)`;
  }
  return undefined;
}

/**
 * Refuses a request no store should see, naming what is wrong: `checkedStore` calls it before the
 * store adapter is asked (adapter/checked-store.ts), so no adapter does.
 */
export function checkRateLimitRequest(request: RateLimitRequest): void {
  const { name, key, limit, perMs } = request;
  if (typeof name !== 'string' || !RATE_LIMIT_NAME_PATTERN.test(name)) {
    throw new ConfigError(
      `rate limit name ${JSON.stringify(name)} is invalid: use 1-128 characters from letters, digits, '_', '.', ':' and '-'`,
    );
  }
  if (typeof key !== 'string' || key.length > MAX_RATE_LIMIT_KEY_LENGTH) {
    throw new ConfigError(
      `rate limit ${name}: key ${JSON.stringify(key)} is not a string of 0-${MAX_RATE_LIMIT_KEY_LENGTH} characters`,
    );
  }
  const problem = rateLimitProblem(limit, perMs);
  if (problem !== undefined) throw new ConfigError(`rate limit ${name}: ${problem}`);
}
