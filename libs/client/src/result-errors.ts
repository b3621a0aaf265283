/**
 * The errors of waiting on a run (`client.result`, `handle.result`, `client.describe`): it failed,
 * the retention sweep deleted it, it is gone with the store's data, or the wait ran out of time
 * (as a wait for the bus's backlog count can). Only the client raises them, so they are its own;
 * their base classes (BatonError, NotFoundError) are @baton/core's, shared by every package.
 */
import { BatonError, NotFoundError, type SerializedError } from '@baton/core';

/** The workflow itself threw (or rejected): what `result()` raises, with the failure the run recorded. */
export class WorkflowFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly failure: SerializedError,
  ) {
    super('BATON_WORKFLOW_FAILED', `run ${runId} failed: ${failure.name}: ${failure.message}`);
  }
}

/**
 * The store no longer knows a run that existed: it lost its data (a Redis without persistence
 * restarted empty, say), or the run's records were removed by hand. A NotFoundError, so code that
 * handles "not found" still does; its message says what was found and what to do.
 */
export class RunLostError extends NotFoundError {
  constructor(
    readonly runId: string,
    /** Why the run is known to have existed (it was seen running, a loss was recorded after its start). */
    readonly evidence: string,
    /** The loss the store recorded, when it recorded one. */
    readonly loss?: { at: number; reason: string },
  ) {
    super(
      `run ${runId} is gone from the store: ${evidence}` +
        (loss === undefined
          ? ''
          : `; the store lost its data at ${new Date(loss.at).toISOString()} (${loss.reason})`) +
        '. Its outcome cannot be read. Start it again from its producer with the same idempotency key ' +
        '(a run some producer already started again is then not started twice), and give the store ' +
        'durable storage (docs/operations.md, "Redis lost its data")',
    );
  }
}

/**
 * The run is gone: the retention sweep deleted it (its tombstone says when). Its outcome can no
 * longer be read; nothing waits for it. Raised by `client.result()` at once instead of waiting.
 */
export class RunDeletedError extends BatonError {
  constructor(
    readonly runId: string,
    /** When the sweep deleted it, on the store's clock (ms since the epoch). */
    readonly deletedAt: number,
  ) {
    super(
      'BATON_RUN_DELETED',
      `run ${runId} was deleted by the retention sweep at ${new Date(deletedAt).toISOString()} ` +
        "(finished runs older than the workers' BATON_RETENTION_MS are deleted), so its outcome is gone: " +
        'read outcomes sooner, or raise BATON_RETENTION_MS',
    );
  }
}

/** Waiting for something exceeded the caller's timeout. */
export class TimeoutError extends BatonError {
  constructor(message: string) {
    super('BATON_TIMEOUT', message, { retryable: true });
  }
}
