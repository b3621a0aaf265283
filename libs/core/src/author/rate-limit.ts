/**
 * Rate limits an activity declares (docs/rate-limits.md): `defineRateLimit` names a limit, an
 * activity's `rateLimit` uses it (optionally with a key per input, for a limit per customer). The
 * store enforces it fleet-wide (contracts/rate-limits.ts); the executor asks before each live
 * attempt and never for a journaled step.
 */
import {
  MAX_RATE_LIMIT_KEY_LENGTH,
  RATE_LIMIT_NAME_PATTERN,
  rateLimitProblem,
  type RateLimitRequest,
} from '../adapter/contracts/rate-limits.js';
import { toMs, type Duration } from './duration.js';
import { ConfigError } from '../shared/errors.js';

/** A named limit: at most `limit` activity attempts per `per`, fleet-wide. Made by {@link defineRateLimit}. */
export interface RateLimitDefinition {
  readonly kind: 'rate-limit';
  /** The window's identity in the store: every definition with this name shares it. */
  readonly name: string;
  readonly limit: number;
  readonly perMs: number;
}

/** What {@link defineRateLimit} takes. */
export interface RateLimitSpec {
  /** 1-128 characters from letters, digits, '_', '.', ':' and '-'. */
  readonly name: string;
  /** Attempts allowed per window: an integer in 1..10,000. */
  readonly limit: number;
  /** The window: `'1s'`, `'1m'`, or ms; a whole number of ms up to one day. */
  readonly per: Duration;
}

/** A limit applied per key of the activity's input: `{ limit: perCustomer, key: (i) => i.customerId }`. */
export interface KeyedRateLimit<I> {
  readonly limit: RateLimitDefinition;
  /** The key of an input (a customer id, say): deterministic, 1-256 characters. */
  key(input: I): string;
}

/** An activity's `rateLimit`: one limit for all its calls, or one window per key. */
export type ActivityRateLimit<I> = RateLimitDefinition | KeyedRateLimit<I>;

/**
 * Defines a rate limit. Throws ConfigError for a bad name, a `limit` that is not an integer in
 * 1..10,000 or a `per` that is not a duration of 1 ms to one day.
 *
 * @example
 * ```ts
 * export const bureau = defineRateLimit({ name: 'credit-bureau', limit: 100, per: '1s' });
 * export const pullCredit = defineActivity({ name: 'pull_credit', rateLimit: bureau, run: ... });
 * ```
 */
export function defineRateLimit(spec: RateLimitSpec): RateLimitDefinition {
  const { name, limit, per } = spec ?? ({} as RateLimitSpec);
  if (typeof name !== 'string' || !RATE_LIMIT_NAME_PATTERN.test(name)) {
    throw new ConfigError(
      `rate limit name ${JSON.stringify(name)} is invalid: use 1-128 characters from letters, digits, '_', '.', ':' and '-'`,
    );
  }
  const perMs = toMs(per, `rate limit ${name}: per`);
  const problem = rateLimitProblem(limit, perMs);
  if (problem !== undefined) {
    throw new ConfigError(`rate limit ${name}: ${problem}; e.g. { limit: 100, per: '1s' }`);
  }
  return Object.freeze({ kind: 'rate-limit' as const, name, limit, perMs });
}

function isDefinition(value: unknown): value is RateLimitDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as RateLimitDefinition).kind === 'rate-limit' &&
    rateLimitProblem((value as RateLimitDefinition).limit, (value as RateLimitDefinition).perMs) === undefined
  );
}

/**
 * Refuses an activity's `rateLimit` that is not a limit from defineRateLimit (or `{ limit, key }`
 * around one): a name given as a string, a typo'd variable that is undefined at the call, a plain
 * object. Never silently unlimited.
 */
export function checkActivityRateLimit(activity: string, value: unknown): void {
  if (value === undefined) return;
  if (isDefinition(value)) return;
  if (typeof value === 'object' && value !== null && 'limit' in value && 'key' in value) {
    const keyed = value as { limit: unknown; key: unknown };
    if (isDefinition(keyed.limit) && typeof keyed.key === 'function') return;
  }
  const found = typeof value === 'string' ? `the string '${value}'` : (JSON.stringify(value) ?? typeof value);
  throw new ConfigError(
    `activity ${activity}: rateLimit must be a limit made with defineRateLimit({ name, limit, per }) or ` +
      `{ limit: <such a limit>, key: (input) => string }; got ${found}. A limit is passed as the value ` +
      'defineRateLimit returned, not by its name',
  );
}

/** The store request for one live call of an activity; throws ConfigError when its key function fails. */
export function rateLimitRequest<I>(
  activity: string,
  rateLimit: ActivityRateLimit<I>,
  input: I,
): RateLimitRequest {
  if (!('key' in rateLimit)) {
    return { name: rateLimit.name, key: '', limit: rateLimit.limit, perMs: rateLimit.perMs };
  }
  const { limit } = rateLimit;
  let key: unknown;
  try {
    key = rateLimit.key(input);
  } catch (err) {
    throw new ConfigError(`activity ${activity}: rateLimit.key threw: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_RATE_LIMIT_KEY_LENGTH) {
    throw new ConfigError(
      `activity ${activity}: rateLimit.key returned ${JSON.stringify(key) ?? String(key)} for limit ${limit.name}; ` +
        `it must return a string of 1-${MAX_RATE_LIMIT_KEY_LENGTH} characters`,
    );
  }
  return { name: limit.name, key, limit: limit.limit, perMs: limit.perMs };
}
