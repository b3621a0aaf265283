/**
 * Typed updates: a request to a running run that its workflow answers. One definition, imported
 * by the workflow that handles the update (`ctx.onUpdate`) and by the caller that sends it
 * (`client.update`), so the arguments and the result are typed on both sides (docs/updates.md).
 * Checked in two steps before anything is journaled: the schema (by the client before sending,
 * and again by the run's worker, since a caller by name, over HTTP or the CLI, has no definition),
 * then the validators, the definition's and the handler's, in the run's worker. A refusal is the
 * caller's answer and leaves no trace in the run's history.
 */
import { ConfigError } from '../shared/errors.js';
import { workflowNameProblem } from './start-fields.js';
import { isStandardSchema, type StandardSchemaV1 } from './standard-schema.js';

/** Type-level only: the arguments and the result. Declared, never created (as signal.ts's marker). */
declare const argsType: unique symbol;
declare const resultType: unique symbol;

/**
 * Refuses an update's arguments: throw (any error; its message is the caller's answer). Runs in
 * the run's worker before the update is journaled, so it must not change anything and must
 * answer at once: a validator that returns a promise rejects the update.
 */
export type UpdateValidator<Args> = (args: Args) => void;

/** A named update taking `Args` and answering `Result`. Create one with {@link defineUpdate}. */
export interface UpdateDefinition<Args = unknown, Result = unknown> {
  readonly kind: 'update';
  /** The name on the wire, in the journal (`UpdateAccepted.name`) and in the HTTP API's path. */
  readonly name: string;
  /**
   * A Standard Schema (zod, valibot, ...) the arguments are checked with: by `client.update`, which
   * sends the schema's output, and again by the worker before the validators run. A failure rejects
   * the update (InvalidInputError on the client; UpdateRejectedError from the worker).
   * @defaultValue none: not checked
   */
  readonly schema?: StandardSchemaV1<unknown, Args> | undefined;
  /** Checks the arguments after the schema; throw to reject. @defaultValue none */
  readonly validate?: UpdateValidator<Args> | undefined;
  /** Type-level only. Never present at runtime. */
  readonly [argsType]?: Args;
  readonly [resultType]?: Result;
}

/** The arguments of an update definition (`unknown` for a plain name). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type UpdateArgs<U> = U extends UpdateDefinition<infer A, any> ? A : unknown;
/** The result of an update definition (`unknown` for a plain name). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type UpdateResult<U> = U extends UpdateDefinition<any, infer R> ? R : unknown;

/** Options of {@link defineUpdate}. */
export interface UpdateOptions<Args> {
  /** See {@link UpdateDefinition.schema}. */
  readonly schema?: StandardSchemaV1<unknown, Args> | undefined;
  /** See {@link UpdateDefinition.validate}. */
  readonly validate?: UpdateValidator<Args> | undefined;
}

/**
 * Defines an update with arguments `Args` and result `Result`:
 *
 * ```ts
 * export const addItem = defineUpdate<{ sku: string; qty: number }, { total: number }>('add_item', {
 *   validate: ({ qty }) => {
 *     if (qty < 1) throw new Error('qty must be at least 1');
 *   },
 * });
 * // in the workflow:
 * ctx.onUpdate(addItem, async ({ sku, qty }) => ({ total: (cart.get(sku) ?? 0) + qty }));
 * // a caller:
 * const { total } = await client.update(runId, addItem, { sku: 'A-1', qty: 2 });
 * ```
 *
 * The name is what callers by name use (`baton runs update <run> add_item`, the HTTP API's
 * `/v1/runs/{runId}/updates/add_item`): 1-128 letters, digits, '_', '.', ':' and '-'.
 */
export function defineUpdate<Args = unknown, Result = unknown>(
  name: string,
  options: UpdateOptions<Args> = {},
): UpdateDefinition<Args, Result> {
  if (workflowNameProblem(name) !== undefined) {
    throw new ConfigError(
      `defineUpdate: name ${JSON.stringify(name) ?? String(name)} is invalid: use 1-128 characters from ` +
        "letters, digits, '_', '.', ':' and '-'",
    );
  }
  const { schema, validate } = options;
  if (schema !== undefined && !isStandardSchema(schema)) {
    throw new ConfigError(
      `defineUpdate('${name}'): schema must be a Standard Schema (an object with '~standard'.validate, ` +
        'as zod 3.24+, valibot and arktype schemas are), or left out',
    );
  }
  if (validate !== undefined && typeof validate !== 'function') {
    throw new ConfigError(`defineUpdate('${name}'): validate must be a function (args) => void, or left out`);
  }
  return Object.freeze({
    kind: 'update' as const,
    name,
    ...(schema !== undefined && { schema }),
    ...(validate !== undefined && { validate }),
  });
}

/** An update of any arguments and result, as a handler table holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyUpdateDefinition = UpdateDefinition<any, any>;

/** Options of `ctx.onUpdate`. */
export interface UpdateHandlerOptions<Args> {
  /**
   * Checks the arguments after the definition's schema and validator, with the workflow's state at
   * hand (a closed order refuses another item); throw to reject. Synchronous, and must not change
   * anything: it runs before the update is journaled, and never on replay. @defaultValue none
   */
  readonly validate?: UpdateValidator<Args> | undefined;
}

/** The name of an update given as a definition or as a plain name. */
export function updateName(update: string | AnyUpdateDefinition): string {
  return typeof update === 'string' ? update : update.name;
}
