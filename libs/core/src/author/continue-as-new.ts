/**
 * Continue-as-new: a run ends and hands its work to a successor run of the same workflow with a
 * fresh history (`return ctx.continueAsNew(input)`), so a long-lived workflow (a subscription, an
 * agent loop) keeps going without its journal growing forever.
 *
 * Invariants:
 * 1. The successor's run id is derived from the run's own (`runIdForKey(workflow, 'continue-as-new:'
 *    + runId)`), and its start carries that idempotency key: however often the run's end is
 *    replayed or retried, one successor exists.
 * 2. The run journals its end (RunCompleted whose result is {@link ContinuedAsNew}, naming the
 *    successor and its input) before the successor's start is sent, and records it in the store
 *    only after: a crash in between replays the end, sends the start again (a no-op on the bus
 *    and in the store) and records it. Started and ended, or neither, as far as anyone waiting sees.
 * 3. `client.result()` follows the chain to its last run's result; the parent's stored result names
 *    its successor, and the successor's idempotency key names its parent.
 */

const CONTINUE = Symbol.for('baton.continueAsNew');

/** What `ctx.continueAsNew` returns; the workflow returns it to end the run and start its successor. */
export class ContinueAsNew<I = unknown> {
  /** Brands the class, so a plain object never passes for it. */
  readonly [CONTINUE] = true;
  constructor(
    /** The successor's input. */
    readonly input: I,
    /** The successor's workflow version; the run's own when left out. */
    readonly version: number | undefined,
  ) {}
}

/**
 * What a run whose workflow returns `O` resolves to through `result()`: its chain's last result,
 * so never a {@link ContinueAsNew}.
 */
export type ChainResult<O> = Exclude<O, ContinueAsNew<unknown>>;

/** Options of `ctx.continueAsNew`. */
export interface ContinueAsNewOptions {
  /**
   * Another version of the same workflow for the successor (a long-lived loop moving onto new
   * code at its next iteration). @defaultValue the running version
   */
  version?: number;
}

/** True for the value a workflow returned with `ctx.continueAsNew`. */
export function isContinueAsNew(value: unknown): value is ContinueAsNew {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONTINUE] === true;
}

/** The key of the field that marks a continued run's result. */
export const CONTINUED_AS = '$batonContinuedAs';

/** The result a continued run records (journal and store): its successor. */
export interface ContinuedAsNew {
  [CONTINUED_AS]: { runId: string; workflow: string; version: number; input: unknown };
}

/** True for the recorded result of a run that continued as new. */
export function isContinuedAsNew(value: unknown): value is ContinuedAsNew {
  if (typeof value !== 'object' || value === null || !(CONTINUED_AS in value)) return false;
  const next = (value as Record<string, unknown>)[CONTINUED_AS];
  return typeof next === 'object' && next !== null && typeof (next as { runId?: unknown }).runId === 'string';
}
