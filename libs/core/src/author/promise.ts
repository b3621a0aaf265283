/**
 * Durable promises (docs/promises.md): `const p = ctx.promise<T>()` gives a workflow a token that
 * any outside system completes, once, with `client.promises.resolve(token, value)` or
 * `reject(token, error)` (over the HTTP API and the CLI too); the workflow awaits `p.value`.
 * Restate calls them awakeables, Resonate durable promises.
 *
 * Invariants:
 * 1. A token is drawn once, live, from the worker's crypto (192 random bits) and journaled in
 *    PromiseCreated; every replay reads it back, so a run's token never changes.
 * 2. A token names one promise of one run: the store's record (`store.promises`) maps it to its run
 *    and step. A token the store does not know, or one that is not a token at all, is refused the
 *    same way (NotFoundError), so a caller learns nothing of other runs by guessing.
 * 3. A promise completes once (`PromiseStore.complete`, atomic in the store): a repeat of the same
 *    completion changes nothing and answers as the first did; a different one is refused.
 * 4. The completion reaches the run in the same atomic store step, as an entry of its signal inbox
 *    named {@link PROMISE_SIGNAL} with id {@link promiseSignalId}: a suspended run wakes as on a
 *    signal, a paused one finds it once resumed, a failed-over one when it replays. The entry's
 *    payload names the token, and a wait takes only an entry naming its own.
 * 5. A timeout is a durable deadline like a signal wait's. At the deadline the owner closes the
 *    record first (`PromiseStore.expire`); a completion that came before wins and is taken, so
 *    a completion the store accepted is always the one the workflow sees.
 * 6. With a schema, the value is checked twice: at completion against the schema's JSON Schema
 *    form (refused there, nothing stored), and by the run against the schema itself, whose output
 *    is what the workflow receives; a value only the second check refuses rejects `p.value`.
 */
import type { Duration } from './duration.js';
import { ConfigError, type SerializedError } from '../shared/errors.js';
import { isStandardSchema, type StandardSchemaV1 } from './standard-schema.js';

/** A durable promise: its token, for the outside system, and its value, for the workflow. */
export interface DurablePromise<T> {
  /**
   * The promise's token: hand it to whoever completes the promise (an email link, a payment
   * provider's callback). A secret: anyone who has it may complete the promise.
   */
  readonly token: string;
  /**
   * The completion: the value given to `resolve` (the schema's output, with a schema), or
   * PromiseRejectedError (`reject`, or a value the schema refused) or PromiseTimeoutError (the
   * timeout ran out). Durable like a signal wait: the run suspends while it waits.
   */
  readonly value: Promise<T>;
}

/** Options of `ctx.promise`. */
export interface PromiseOptions<T = unknown> {
  /**
   * A Standard Schema with a JSON Schema form (Standard JSON Schema: zod 4.2+, and others): a value
   * that fails its JSON Schema is refused at completion (nothing is stored), and the run checks the
   * value with the schema itself and receives its output. @defaultValue none: any JSON value
   */
  readonly schema?: StandardSchemaV1<unknown, T> | undefined;
  /** Give up after this long: `p.value` rejects with PromiseTimeoutError. @defaultValue wait forever */
  readonly timeout?: Duration | undefined;
}

// The inbox entries that carry completions to their runs (invariant 4) are the store's to write.
export { PROMISE_SIGNAL, promiseSignalId } from '../adapter/contracts/promises.js';

/** What a token looks like: `bp_` and 32 base64url characters (192 bits). */
const TOKEN_PATTERN = /^bp_[A-Za-z0-9_-]{32}$/;

/** True for a string shaped like a token (it may still be unknown to the store). */
export function isPromiseToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}

/**
 * What a completion carries to its run (sealed as a signal payload when the fleet encrypts): the
 * token it completes, and the value or the error.
 */
export type PromiseDelivery =
  | { token: string; outcome: 'resolved'; value: unknown }
  | { token: string; outcome: 'rejected'; error: SerializedError };

/**
 * The JSON Schema (draft-07, the dialect every Standard JSON Schema library is asked to write) of
 * `schema`'s input, which completions are checked against before anything is stored. ConfigError
 * when the schema has no JSON Schema form.
 */
export function promiseJsonSchema(schema: unknown, what: string): Record<string, unknown> {
  if (!isStandardSchema(schema)) {
    throw new ConfigError(
      `${what}: schema must be a Standard Schema (an object with '~standard'.validate, as zod, ` +
        'valibot and arktype schemas are), or left out',
    );
  }
  const converter = (schema['~standard'] as { jsonSchema?: { input?: unknown } }).jsonSchema;
  if (typeof converter?.input !== 'function') {
    throw new ConfigError(
      `${what}: the schema has no JSON Schema form (Standard JSON Schema, '~standard'.jsonSchema), ` +
        'which a completion is checked against before anything is stored: use a schema library that ' +
        'has one (zod 4.2 or later), or leave the schema out and check the value in the workflow',
    );
  }
  try {
    const json = (converter.input as (options: { target: string }) => unknown)({ target: 'draft-07' });
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('not an object');
    return json as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(
      `${what}: the schema's JSON Schema form could not be made (${err instanceof Error ? err.message : String(err)}); ` +
        'use types JSON can carry (no dates, maps or functions), or leave the schema out',
    );
  }
}
