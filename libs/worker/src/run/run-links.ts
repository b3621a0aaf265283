/**
 * What a run sends to other runs: the start of its successor (continue-as-new) or of a child, its
 * end to its parent, and cancels to the children it leaves behind. All are sent after the run's
 * end (or the step) is journaled and are idempotent, so a crash that replays them sends the same
 * messages again and changes nothing (core's continue-as-new.ts and child-workflows.ts).
 */
import type { RunOutcome, RunRecord } from '@baton/core/adapter';
import {
  cancelMessage,
  childEndSignalId,
  childrenInJournal,
  childSignalName,
  sealValue,
  sendRunMessage,
  signalMessage,
  startMessage,
  type ChildEnd,
  type ChildStartRequest,
  type JournalEntry,
  continuationKey,
  parentLinkOfKey,
  parentOfKey,
  CONTINUED_AS,
  isContinuedAsNew,
  type ContinuedAsNew,
} from '@baton/core/runtime';
import type { ResolvedWorkerOptions } from '../options.js';

type LinkOptions = Pick<ResolvedWorkerOptions, 'transport' | 'claimCheck' | 'logger' | 'payloadProtection'>;

/** A run start sent by a run: its input inline or, when large, by reference, as a client's would be. */
async function sendStart(
  options: LinkOptions,
  start: ChildStartRequest & { traceparent?: string },
  what: string,
): Promise<void> {
  const ref = await options.claimCheck.offloadValue(start.runId, start.input, what);
  await sendRunMessage(
    options.transport.runQueue,
    startMessage({
      runId: start.runId,
      workflow: start.workflow,
      version: start.version,
      ...(ref === undefined
        ? { input: sealValue(start.input, start.runId, 'run input', options.payloadProtection, what) }
        : { inputRef: ref }),
      idempotencyKey: start.idempotencyKey,
      ...(start.traceparent !== undefined && { traceparent: start.traceparent }),
    }),
  );
}

/** Sends the start of the run `run` continued as: its id and key derive from `run`'s. */
export async function startSuccessor(
  options: LinkOptions,
  run: RunRecord,
  result: ContinuedAsNew,
): Promise<void> {
  const next = result[CONTINUED_AS];
  await sendStart(
    options,
    {
      runId: next.runId,
      workflow: next.workflow,
      version: next.version,
      input: next.input,
      idempotencyKey: successorKey(run),
      ...(run.traceparent !== undefined && { traceparent: run.traceparent }),
    },
    `input of run ${next.runId} (${next.workflow}@${next.version}, continued from run ${run.runId})`,
  );
  options.logger.info(
    { runId: run.runId, successor: next.runId, workflow: next.workflow, version: next.version },
    'run continued as new',
  );
}

/** The successor's key: its run's continuation key, carrying a child's link to its parent on. */
export function successorKey(run: RunRecord): string {
  const link = parentLinkOfKey(run.idempotencyKey);
  return link === undefined ? continuationKey(run.runId) : `${continuationKey(run.runId)}|${link}`;
}

/** Sends the start of a child of `parent` (`ctx.startChild`); the trace carries on from the parent's. */
export async function startChild(
  options: LinkOptions,
  parent: RunRecord,
  child: ChildStartRequest,
): Promise<void> {
  await sendStart(
    options,
    { ...child, ...(parent.traceparent !== undefined && { traceparent: parent.traceparent }) },
    `input of child run ${child.runId} (${child.workflow}@${child.version}, started by run ${parent.runId})`,
  );
  options.logger.info(
    { runId: parent.runId, child: child.runId, workflow: child.workflow, version: child.version },
    'child run started',
  );
}

/**
 * A child's end, as a signal to its parent (deduplicated by its id). A parent that has finished
 * drops it; one that is waiting wakes.
 */
export async function reportEndToParent(
  options: LinkOptions,
  run: RunRecord,
  outcome: RunOutcome,
): Promise<void> {
  const parent = parentOfKey(run.idempotencyKey);
  if (parent === undefined) return;
  const end: ChildEnd =
    outcome.status === 'completed'
      ? isContinuedAsNew(outcome.result)
        ? { status: 'continued', successor: outcome.result[CONTINUED_AS].runId }
        : { status: 'completed', result: outcome.result }
      : { status: outcome.status, error: outcome.error };
  const name = childSignalName(run.runId);
  const what = `end of child run ${run.runId} (${run.workflow}) for its parent ${parent.runId}`;
  const ref = await options.claimCheck.offloadValue(parent.runId, end, what);
  await sendRunMessage(
    options.transport.runQueue,
    signalMessage({
      runId: parent.runId,
      name,
      ...(ref === undefined
        ? { payload: sealValue(end, parent.runId, 'signal payload', options.payloadProtection, what) }
        : { payloadRef: ref }),
      signalId: childEndSignalId(run.runId),
    }),
  );
}

/**
 * {@link reportEndToParent} for a run ended outside its session's finish (its resume kept failing,
 * its data failed verification), by a caller that holds only its id: the record is read for the
 * link. Sent before the end is recorded, as the session's finish sends it, so a crash in between
 * sends it again.
 */
export async function reportEndToParentOf(
  options: LinkOptions & Pick<ResolvedWorkerOptions, 'store'>,
  runId: string,
  outcome: RunOutcome,
): Promise<void> {
  const run = await options.store.runs.get(runId);
  if (run !== undefined) await reportEndToParent(options, run, outcome);
}

/** Cancels the children `runId` started with policy `cancel` whose end its journal has not received. */
export async function cancelOpenChildren(
  options: LinkOptions,
  runId: string,
  entries: readonly JournalEntry[],
  outcome: RunOutcome,
): Promise<void> {
  const open = childrenInJournal(entries).filter((c) => !c.ended && c.parentClosePolicy === 'cancel');
  if (open.length === 0) return;
  const reason = `parent run ${runId} ${outcome.status}`;
  await Promise.all(
    open.map((child) => sendRunMessage(options.transport.runQueue, cancelMessage(child.runId, reason))),
  );
  options.logger.info(
    { runId, children: open.map((c) => c.runId), reason },
    'cancelled the children left running',
  );
}
