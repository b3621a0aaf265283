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
 */
import type { SerializedError } from './errors.js';
import type { JournalEntry } from './journal.js';

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

/** The idempotency key of the child started by step `seq` of run `parentRunId` (invariant 1). */
export function childKey(parentRunId: string, seq: number): string {
  return `${childKeyPrefix(parentRunId)}${seq}`;
}

/** What the keys of a run's children start with: `listRuns({ idempotencyKeyPrefix })` finds them. */
export function childKeyPrefix(parentRunId: string): string {
  return `child:${parentRunId}:`;
}

const CHILD_KEY = /^child:(.+):(\d+)$/s;

/** The parent a run was started by, read from its idempotency key (invariant 6). */
export function parentOfKey(key: string | null | undefined): { runId: string; seq: number } | undefined {
  const match = key === null || key === undefined ? null : CHILD_KEY.exec(key);
  return match ? { runId: match[1]!, seq: Number(match[2]) } : undefined;
}

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
  const ended = new Set<string>();
  for (const entry of entries) {
    if (
      entry.type === 'ActivityCompleted' &&
      entry.name.startsWith(CHILD_START_PREFIX) &&
      isChildStarted(entry.result)
    ) {
      children.set(entry.result.runId, { ...entry.result, ended: false });
    } else if (entry.type === 'SignalReceived' && entry.name.startsWith(CHILD_START_PREFIX)) {
      ended.add(entry.name.slice(CHILD_START_PREFIX.length));
    }
  }
  for (const id of ended) {
    const child = children.get(id);
    if (child) child.ended = true;
  }
  return [...children.values()];
}
