/**
 * Typed signals: one definition, imported by the workflow that waits for the signal and by the
 * producer that sends it, so the payload type is checked on both sides (DESIGN §2). With a schema
 * the payload is checked at run time on both sides too: `client.signal` refuses it before sending,
 * and `ctx.waitForSignal` never hands the workflow a payload its schema rejects (pending-waits.ts).
 */
import { ConfigError } from '../shared/errors.js';
import {
  isStandardSchema,
  type StandardSchemaInput,
  type StandardSchemaOutput,
  type StandardSchemaV1,
} from './standard-schema.js';

/**
 * Carries the payload type only; no value is ever stored under it. A symbol that is declared but
 * never created keeps the marker out of editors' completions and out of the JSON of a definition.
 */
declare const payloadType: unique symbol;

/**
 * A named signal whose payload has type `T` (what the workflow receives), sent as an `In` (the
 * same unless a schema transforms the value). Create one with {@link defineSignal}.
 */
export interface SignalDefinition<T = unknown, In = T> {
  readonly kind: 'signal';
  /** The name on the wire and in the journal (`SignalWaitStarted.name`). */
  readonly name: string;
  /**
   * A Standard Schema (zod, valibot, ...) the payload is checked with: by `client.signal`, which
   * sends the schema's output, and again by `ctx.waitForSignal`, which skips a payload that fails
   * it (the wait goes on; docs/workflows.md, "A typed client"). @defaultValue none: not checked
   */
  readonly schema?: StandardSchemaV1<In, T> | undefined;
  /** Type-level only: the payload type. Never present at runtime. */
  readonly [payloadType]?: T;
}

/** The payload type of a signal definition (`unknown` for a plain name). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SignalPayload<S> = S extends SignalDefinition<infer T, any> ? T : unknown;

/**
 * Defines a signal with payload type `T`:
 *
 * ```ts
 * export const humanReview = defineSignal<boolean>('human_review');
 * const approved = await ctx.waitForSignal(humanReview); // boolean
 * await client.signal(runId, humanReview, true); // payload checked against boolean
 * ```
 *
 * Without a schema the type is a promise between the two sides, not a runtime check: a producer
 * that sends the name as a plain string (the CLI, another language) can deliver any payload. With
 * `{ schema }` (any Standard Schema) the payload type is the schema's, `client.signal` refuses an
 * invalid payload with InvalidInputError and sends the schema's output, and `ctx.waitForSignal`
 * checks every payload it receives, skipping (with a warning) one that fails:
 *
 * ```ts
 * export const approval = defineSignal('approval', { schema: z.object({ approved: z.boolean() }) });
 * ```
 */
export function defineSignal<Schema extends StandardSchemaV1>(
  name: string,
  options: { readonly schema: Schema },
): SignalDefinition<StandardSchemaOutput<Schema>, StandardSchemaInput<Schema>>;
export function defineSignal<T = unknown>(
  name: string,
  options?: { readonly schema?: StandardSchemaV1<unknown, T> | undefined },
): SignalDefinition<T>;
export function defineSignal(
  name: string,
  options: { readonly schema?: StandardSchemaV1 | undefined } = {},
): SignalDefinition {
  // Any non-empty string, as plain names have always been: a signal already in use under its
  // name can move to a definition without renaming (which would strand the runs waiting for it).
  if (typeof name !== 'string' || name.length === 0) {
    throw new ConfigError(`defineSignal needs a non-empty name, got ${JSON.stringify(name) ?? String(name)}`);
  }
  const { schema } = options;
  if (schema === undefined) return Object.freeze({ kind: 'signal' as const, name });
  if (!isStandardSchema(schema)) {
    throw new ConfigError(
      `defineSignal('${name}'): schema must be a Standard Schema (an object with '~standard'.validate, ` +
        'as zod 3.24+, valibot and arktype schemas are), or left out',
    );
  }
  return Object.freeze({ kind: 'signal' as const, name, schema });
}

/** The name of a signal given as a definition or as a plain name. */
export function signalName(signal: string | SignalDefinition<unknown, unknown>): string {
  return typeof signal === 'string' ? signal : signal.name;
}
