/**
 * Typed signals: one definition, imported by the workflow that waits for the signal and by the
 * producer that sends it, so the payload type is checked on both sides (DESIGN §2).
 */
import { ConfigError } from './errors.js';

/**
 * Carries the payload type only; no value is ever stored under it. A symbol that is declared but
 * never created keeps the marker out of editors' completions and out of the JSON of a definition.
 */
declare const payloadType: unique symbol;

/** A named signal whose payload has type `T`. Create one with {@link defineSignal}. */
export interface SignalDefinition<T = unknown> {
  readonly kind: 'signal';
  /** The name on the wire and in the journal (`SignalWaitStarted.name`). */
  readonly name: string;
  /** Type-level only: the payload type. Never present at runtime. */
  readonly [payloadType]?: T;
}

/** The payload type of a signal definition (`unknown` for a plain name). */
export type SignalPayload<S> = S extends SignalDefinition<infer T> ? T : unknown;

/**
 * Defines a signal with payload type `T`:
 *
 * ```ts
 * export const humanReview = defineSignal<boolean>('human_review');
 * const approved = await ctx.waitForSignal(humanReview); // boolean
 * await client.signal(runId, humanReview, true); // payload checked against boolean
 * ```
 *
 * The type is a promise between the two sides, not a runtime check: a producer that sends the
 * name as a plain string can still deliver any payload.
 */
export function defineSignal<T = unknown>(name: string): SignalDefinition<T> {
  // Any non-empty string, as plain names have always been: a signal already in use under its
  // name can move to a definition without renaming (which would strand the runs waiting for it).
  if (typeof name !== 'string' || name.length === 0) {
    throw new ConfigError(`defineSignal needs a non-empty name, got ${JSON.stringify(name) ?? String(name)}`);
  }
  return Object.freeze({ kind: 'signal' as const, name });
}

/** The name of a signal given as a definition or as a plain name. */
export function signalName(signal: string | SignalDefinition<unknown>): string {
  return typeof signal === 'string' ? signal : signal.name;
}
