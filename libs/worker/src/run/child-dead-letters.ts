/**
 * A child whose start message is dead-lettered (no worker registers its workflow version, or the
 * message is unparseable, too large, its input unreadable, or it kept failing) would never run, so
 * its parent would wait for it forever. Before such a start is dead-lettered, its child is settled
 * here: recorded as a failed run (a tombstone) and its end sent to the parent as a failed child's
 * is (run-links.ts, core's child-workflows.ts invariant 3), so the parent's `result()` throws
 * ChildWorkflowError naming the child, its workflow@version and the dead-letter code
 * (docs/child-workflows.md, "A child whose start is dead-lettered").
 *
 * Invariants:
 * 1. Only a start whose parent link can be trusted is settled: a start message (decoded, or for an
 *    unparseable or too-large one, JSON whose fields read as a start's) whose idempotency key links
 *    to a parent and whose run id is the one Baton derives from that key and workflow. Anything
 *    else is dead-lettered as before, and nobody can be told.
 * 2. Order: the tombstone, then the end to the parent, then the dead letter and the ack. A crash
 *    anywhere before the ack redelivers the start, which takes the same steps again: the tombstone
 *    is found (not made twice) and the same end is sent again, which the parent's inbox ignores
 *    (one signal id per child). A settle that fails (the store is down) naks the message: it is
 *    dead-lettered only once its child is settled.
 * 3. Once the tombstone is finished the child is settled for good: a later start of it (a redrive
 *    of its letter after a fix, by an operator or by version-redrive.ts; a duplicate) finds a
 *    finished run and is dropped, after sending the parent the same end again. No child ever runs
 *    under that id, so a redrive cannot make a second child.
 * 4. The tombstone is made in two store calls (`runs.createAndLease`, then `runs.finish` under the
 *    lease's epoch). In between, its lease is held by {@link SETTLING_OWNER}, a worker id no
 *    worker has, for {@link SETTLING_LEASE_MS}: no reaper or dead-worker scan hands it out, so a
 *    crash in between leaves the child unrun, never run with a made-up input. Whoever meets that
 *    unfinished tombstone finishes it: the next worker to dead-letter the start (the redelivered
 *    message), or, when the start is readable and a worker now registers its version, that worker
 *    releases the lease and runs the child once with the input the tombstone kept (the message's
 *    own, when inline): the parent was never told anything, so the child's real end reaches it.
 */
import { BatonError, CHILD_START_DEAD_LETTERED } from '@baton/core';
import { RUN_ID_PATTERN, type Delivery, type RunOutcome, type RunRecord } from '@baton/core/adapter';
import {
  openError,
  runIdForKey,
  sealOutcome,
  sealValue,
  serializeError,
  type RunMessage,
  type StartMessage,
  parentOfKey,
} from '@baton/core/runtime';
import type { ResolvedWorkerOptions } from '../options.js';
import { reportEndToParent } from './run-links.js';

/**
 * The owner of a tombstone's lease between its two store calls (invariant 4). The space makes it
 * an id no worker is given by default, and no worker registers its presence under it.
 */
export const SETTLING_OWNER = 'baton dead-letter';

/** How long that lease lasts: long enough that no reaper hands it out before the start comes back. */
export const SETTLING_LEASE_MS = 365 * 24 * 3_600_000;

/** The start of a child, as far as it could be read from a message about to be dead-lettered. */
export interface ChildStart {
  runId: string;
  workflow: string;
  version: number;
  idempotencyKey: string;
  parentRunId: string;
  /** The message's inline input, when the message was decoded and carried one; else null. */
  input: unknown;
  traceparent?: string;
}

/** A start of a child that cannot run: its parent learns of it through the child's end. */
export class StartDeadLetteredError extends BatonError {
  constructor(
    readonly childRunId: string,
    readonly workflow: string,
    readonly version: number,
    readonly letterCode: string,
    reason: string,
  ) {
    super(
      CHILD_START_DEAD_LETTERED,
      `the start of child run ${childRunId} (${workflow}@${version}) was dead-lettered '${letterCode}': ${reason}`,
    );
  }
}

/**
 * The child start a message holds, when its parent link can be trusted (invariant 1): from the
 * decoded message, or, when it could not be decoded, from its JSON.
 */
export function childStartOf(delivery: Delivery, message: RunMessage | undefined): ChildStart | undefined {
  if (message !== undefined) {
    if (message.kind !== 'start') return undefined;
    return trustedStart(message, message.inputRef === undefined ? (message.input ?? null) : null);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(delivery.data));
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object' || (raw as { kind?: unknown }).kind !== 'start') {
    return undefined;
  }
  const fields = raw as Record<string, unknown>;
  const { runId, workflow, version, idempotencyKey, traceparent } = fields;
  if (
    typeof runId !== 'string' ||
    !RUN_ID_PATTERN.test(runId) ||
    typeof workflow !== 'string' ||
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < 1 ||
    typeof idempotencyKey !== 'string'
  ) {
    return undefined;
  }
  // The input of a message that could not be read is not trusted either: the tombstone keeps none.
  return trustedStart(
    {
      runId,
      workflow,
      version,
      idempotencyKey,
      ...(typeof traceparent === 'string' && { traceparent }),
    },
    null,
  );
}

function trustedStart(
  start: Pick<StartMessage, 'runId' | 'workflow' | 'version' | 'idempotencyKey' | 'traceparent'>,
  input: unknown,
): ChildStart | undefined {
  const key = start.idempotencyKey;
  const parent = parentOfKey(key);
  if (key === undefined || parent === undefined) return undefined;
  // A child's key derives its id; a successor's id derives from the part before the link it carries.
  if (runIdForKey(start.workflow, key.split('|')[0]!) !== start.runId) return undefined;
  return {
    runId: start.runId,
    workflow: start.workflow,
    version: start.version,
    idempotencyKey: key,
    parentRunId: parent.runId,
    input,
    ...(start.traceparent !== undefined && { traceparent: start.traceparent }),
  };
}

/** True for a child settled here, finished (invariant 3). */
export function isSettledChild(run: RunRecord): boolean {
  return run.status === 'failed' && run.error?.code === CHILD_START_DEAD_LETTERED;
}

/**
 * The lease epoch of a tombstone left unfinished by a crash between its two store calls (invariant
 * 4), or undefined for any other run; asks the store only about a run that could be one (a child,
 * running, claimed once).
 */
export async function unfinishedTombstoneEpoch(
  options: Pick<ResolvedWorkerOptions, 'store'>,
  run: RunRecord,
): Promise<number | undefined> {
  if (run.status !== 'running' || run.attempts !== 1 || parentOfKey(run.idempotencyKey) === undefined) {
    return undefined;
  }
  const lease = await options.store.leases.get(run.runId);
  return lease?.state === 'held' && lease.owner === SETTLING_OWNER ? lease.epoch : undefined;
}

/**
 * Settles the child of a start about to be dead-lettered (invariants 2 to 4): `told` when its
 * parent was sent the child's failure, `alive` when the child exists as a run of its own (another
 * copy of its start created it), which reports its own end.
 */
export async function settleDeadLetteredChild(
  options: Pick<ResolvedWorkerOptions, 'store' | 'transport' | 'claimCheck' | 'logger' | 'payloadProtection'>,
  start: ChildStart,
  letter: { code: string; reason: string },
): Promise<'told' | 'alive'> {
  const { store, logger } = options;
  const failure = new StartDeadLetteredError(
    start.runId,
    start.workflow,
    start.version,
    letter.code,
    letter.reason,
  );
  const { stack: _stack, ...error } = serializeError(failure);
  let outcome: RunOutcome = { status: 'failed', error };
  const taken = await store.runs.createAndLease(
    {
      runId: start.runId,
      workflow: start.workflow,
      version: start.version,
      input: sealValue(start.input, start.runId, 'run input', options.payloadProtection),
      idempotencyKey: start.idempotencyKey,
      traceparent: start.traceparent ?? null,
    },
    SETTLING_OWNER,
    SETTLING_LEASE_MS,
  );
  const run = taken.run;
  if (taken.created) {
    // A new run's first lease is never refused; were it, the run is left to whoever claims it.
    if (!taken.lease.ok) return 'alive';
    await store.runs.finish(
      run.runId,
      taken.lease.epoch,
      sealOutcome(outcome, run.runId, options.payloadProtection),
    );
  } else if (run.runId !== start.runId) {
    return 'alive'; // its key names another run: nothing of this one to settle
  } else if (isSettledChild(run)) {
    outcome = { status: 'failed', error: openError(run.error, run.runId, options.payloadProtection)! };
  } else {
    const lease = await store.leases.get(run.runId);
    if (lease?.state !== 'held' || lease.owner !== SETTLING_OWNER) return 'alive';
    await store.runs.finish(
      run.runId,
      lease.epoch,
      sealOutcome(outcome, run.runId, options.payloadProtection),
    );
  }
  await reportEndToParent(options, { ...run, status: 'failed', error: outcome.error }, outcome);
  logger.warn(
    {
      runId: start.runId,
      parent: start.parentRunId,
      workflow: `${start.workflow}@${start.version}`,
      code: letter.code,
    },
    `child run ${start.runId} failed: its start is dead-lettered; its parent ${start.parentRunId} was told`,
  );
  return 'told';
}

/** Sends a settled child's end to its parent again (invariant 3): the parent's inbox ignores a repeat. */
export async function retellParent(
  options: Pick<ResolvedWorkerOptions, 'transport' | 'claimCheck' | 'logger' | 'payloadProtection'>,
  run: RunRecord,
): Promise<void> {
  // The record's error is sealed where the fleet encrypts: the parent is sent it opened, sealed anew for it.
  const error = openError(run.error, run.runId, options.payloadProtection)!;
  await reportEndToParent(options, run, { status: 'failed', error });
  options.logger.info(
    { runId: run.runId, workflow: `${run.workflow}@${run.version}` },
    `start of child run ${run.runId} dropped: its start was dead-lettered and the child settled as failed; ` +
      'start the parent anew to start a new child (a retry of the parent replays the same failure)',
  );
}
