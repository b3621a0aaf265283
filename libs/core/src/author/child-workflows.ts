/**
 * Child workflows: a workflow starts another (`ctx.startChild`, `ctx.executeChild`) and waits for
 * its result durably. Built from parts the run already has: a journaled step, a start message,
 * and a signal.
 *
 * Invariants:
 * 1. A child's run id derives from its parent's run id and the step that starts it
 *    (`runIdForKey(workflow, childKey(parentRunId, seq))`), and its start carries that key: however
 *    often the parent replays or retries the step, one child exists.
 * 2. Starting is a journaled step (the activity `baton.child:<workflow>`) whose result names the
 *    child: a resumed parent gets the id back from its journal and sends nothing.
 * 3. A child reports its end to its parent as a signal named {@link childSignalName} with signal id
 *    {@link childEndSignalId}, sent after the child's end is journaled and before it is recorded
 *    (as a continued run's successor start is): a crash in between replays the end and sends the
 *    same signal again, which the parent's inbox ignores.
 * 4. `handle.result()` is a durable wait for that signal (the parent suspends and holds no worker);
 *    a failed or cancelled child raises {@link ChildWorkflowError} in the parent.
 * 5. Parent close policy: when the parent ends (completed, failed or cancelled), every child it
 *    started with policy `cancel` whose end it has not received is sent a cancel, after the
 *    parent's end is journaled and before it is recorded (so a crash in between sends it again).
 *    Children started with `abandon` run on.
 * 6. The link is the child's idempotency key: `parentOfKey(run.idempotencyKey)` names the parent
 *    and the step in every store, with no new field; the parent's history names each child in the
 *    step that started it.
 * 7. A child that continues as new reports `continued` naming its successor, whose key carries the
 *    parent link on (`continue-as-new:<child>|child:<parent>:<seq>`): the successor reports its own
 *    end to the parent, which waits for it in turn, so `result()` follows the chain to its last run
 *    and the parent-close policy reaches the chain's current run.
 * 8. A child whose start is dead-lettered (it could never run) is settled by the worker that
 *    dead-letters it: recorded as a failed run whose error has the code
 *    {@link CHILD_START_DEAD_LETTERED}, and its end sent to the parent as in invariant 3, so the
 *    parent's `result()` throws instead of waiting for ever; a later start of that child (a redrive
 *    of its letter) finds it finished and starts nothing (libs/worker's child-dead-letters.ts).
 */
import type { SerializedError } from '../shared/errors.js';
import type { JournalEntry } from '../shared/journal.js';

/** What happens to a child still running when its parent ends. */
export type ParentClosePolicy = 'cancel' | 'abandon';

/** Options of `ctx.startChild` and `ctx.executeChild`. */
export interface ChildWorkflowOptions {
  /** The child's workflow version. @defaultValue the definition's version */
  version?: number;
  /**
   * `cancel`: a child still running when the parent ends (in any way) is cancelled. `abandon`: it
   * runs on, and its end reaches nobody. @defaultValue 'cancel'
   */
  parentClosePolicy?: ParentClosePolicy;
}

/** A started child: its run id, and its result as a durable wait. */
export interface ChildHandle<O> {
  readonly runId: string;
  readonly workflow: string;
  readonly version: number;
  /**
   * Waits durably for the child's end: its result, or ChildWorkflowError when it failed or was
   * cancelled. Called again, it returns the same promise.
   */
  result(): Promise<O>;
}

/** The prefix of the journaled step that starts a child (its activity name). */
export const CHILD_START_PREFIX = 'baton.child:';

/** The journaled result of the step that started a child (invariant 2). */
export interface ChildStarted {
  runId: string;
  workflow: string;
  version: number;
  parentClosePolicy: ParentClosePolicy;
}

/** What a child's end signal carries (invariant 3). */
export type ChildEnd =
  | { status: 'completed'; result: unknown }
  | { status: 'failed' | 'cancelled'; error: SerializedError }
  | { status: 'continued'; successor: string };

/**
 * The `failure.code` of a child whose start was dead-lettered (no worker registers its workflow
 * version; its message was unparseable, too large or its input unreadable): it never ran, and the
 * worker that dead-lettered its start recorded it as a failed run with this code and told its
 * parent, whose `result()` throws ChildWorkflowError (docs/child-workflows.md).
 */
export const CHILD_START_DEAD_LETTERED = 'BATON_START_DEAD_LETTERED';

/** The signal that carries a child's end to its parent. */
export function childSignalName(childRunId: string): string {
  return `baton.child:${childRunId}`;
}

/** The signal id of a child's end: one per child, so a repeat is ignored (invariant 3). */
export function childEndSignalId(childRunId: string): string {
  return `child-end:${childRunId}`;
}

function isChildStarted(value: unknown): value is ChildStarted {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ChildStarted).runId === 'string' &&
    ((value as ChildStarted).parentClosePolicy === 'cancel' ||
      (value as ChildStarted).parentClosePolicy === 'abandon')
  );
}

/**
 * The children a run started, from its journal, with whether their end has reached it: the
 * parent-close policy (invariant 5) needs them even when the run's end is replayed and its code
 * never runs again.
 */
export function childrenInJournal(
  entries: readonly JournalEntry[],
): Array<ChildStarted & { ended: boolean }> {
  const children = new Map<string, ChildStarted & { ended: boolean }>();
  // Ends may be journaled before the start they answer is (signals wait in the inbox), so they are
  // applied after the starts, in journal order: a `continued` end moves the child to its successor.
  const ends: Array<{ runId: string; successor: string | undefined }> = [];
  for (const entry of entries) {
    if (
      entry.type === 'ActivityCompleted' &&
      entry.name.startsWith(CHILD_START_PREFIX) &&
      isChildStarted(entry.result)
    ) {
      children.set(entry.result.runId, { ...entry.result, ended: false });
    } else if (entry.type === 'SignalReceived' && entry.name.startsWith(CHILD_START_PREFIX)) {
      ends.push({
        runId: entry.name.slice(CHILD_START_PREFIX.length),
        successor: successorIn(entry.payload),
      });
    }
  }
  for (const end of ends) {
    const child = children.get(end.runId);
    if (child === undefined) continue;
    if (end.successor === undefined) {
      child.ended = true;
    } else {
      children.delete(end.runId);
      children.set(end.successor, { ...child, runId: end.successor });
    }
  }
  return [...children.values()];
}

/** The successor a `continued` child end names (invariant 7); undefined for any other end. */
function successorIn(payload: unknown): string | undefined {
  const end = payload as Partial<{ status: string; successor: unknown }> | null;
  return typeof end === 'object' &&
    end !== null &&
    end.status === 'continued' &&
    typeof end.successor === 'string'
    ? end.successor
    : undefined;
}
