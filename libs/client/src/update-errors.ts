/**
 * The errors of `client.update` (docs/updates.md) that only the client raises: the update was
 * rejected before anything was journaled (its schema or validator refused it, or the workflow has
 * no handler of its name), its handler failed, or the caller's wait ran out (the update still
 * applies once: ask again with the same update id for its result).
 */
import { BatonError, type SerializedError } from '@baton/core';
import { TimeoutError } from './result-errors.js';

/**
 * The run refused the update before journaling it: its arguments failed the update's schema or a
 * validator (`code` BATON_UPDATE_REJECTED, the message the validator's), or the workflow registers
 * no handler of that name (BATON_UPDATE_UNKNOWN). Nothing happened in the run; the same request
 * is refused again.
 */
export class UpdateRejectedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly update: string,
    readonly updateId: string,
    refusal: SerializedError,
  ) {
    super(
      refusal.code === 'BATON_UPDATE_UNKNOWN' ? 'BATON_UPDATE_UNKNOWN' : 'BATON_UPDATE_REJECTED',
      refusal.message,
    );
  }
}

/**
 * The update was accepted and its handler threw: `failure` is what it threw (as the run recorded
 * it, `UpdateCompleted.error`). Whatever the handler did before it threw stays done.
 */
export class UpdateFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly update: string,
    readonly updateId: string,
    readonly failure: SerializedError,
  ) {
    super(
      'BATON_UPDATE_FAILED',
      `update '${update}' (id ${updateId}) of run ${runId} failed: ${failure.name}: ${failure.message}`,
    );
  }
}

/**
 * No answer within the caller's timeout. The request stays with the run and is applied once when
 * its owner gets to it (a paused run once resumed): `client.update` again with the same `updateId`
 * answers its result then. A TimeoutError, so code that handles timeouts still does.
 */
export class UpdateTimeoutError extends TimeoutError {
  constructor(
    readonly runId: string,
    readonly update: string,
    readonly updateId: string,
    timeoutMs: number,
    status: string,
  ) {
    super(
      `update '${update}' (id ${updateId}) of run ${runId} was not answered within ${timeoutMs} ms ` +
        `(run status: ${status}). It stays with the run and is applied once: call again with ` +
        `{ updateId: '${updateId}' } for its result. A run whose workflow registers no update handler ` +
        'reads requests only when one wakes it while it is suspended',
    );
  }
}
