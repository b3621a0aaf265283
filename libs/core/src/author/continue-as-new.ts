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
 * 4. Nothing sent to the run is lost by the continuation (docs/continue-as-new.md, "What is carried
 *    over"): after journaling its end, the run is marked as continuing (`runs.continueAs`, fenced),
 *    and from then on the store keeps nothing new for it and names the successor instead; the owner
 *    then carries what the run never took (the signals of the workflow's own names, the update
 *    requests not yet accepted) to the successor under the same ids, so a replay of the end adds
 *    nothing. A signal or update addressed to a continued run goes along the chain, at most
 *    {@link MAX_CONTINUATION_HOPS} runs, to the first run that keeps it. A durable promise stays
 *    the run's own: completing it after the continuation is refused, naming the successor.
 */
import { PROMISE_SIGNAL } from '../adapter/contracts/promises.js';
import { CHILD_START_PREFIX } from './child-workflows.js';

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

/**
 * How many continuations a signal or an update sent to a run follows before it is refused: a chain
 * longer than this from the run it was addressed to means an id far in the past (or a loop gone
 * wrong); address the chain's current run instead.
 */
export const MAX_CONTINUATION_HOPS = 100;

/**
 * Whether a signal of this name goes on to a run's successor: the workflow's own signals do;
 * Baton's own do not (a durable promise's completion and a child's end answer a step of the run
 * that made it, which its successor never took).
 */
export function carriesOver(signalName: string): boolean {
  return signalName !== PROMISE_SIGNAL && !signalName.startsWith(CHILD_START_PREFIX);
}
