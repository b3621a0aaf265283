/**
 * The errors a transport or store raises: a write under a stale epoch, a journal append that lost
 * the race, stored bytes that do not decode or verify, a payload the bus refuses.
 */
import { BatonError, type BatonErrorOptions, RunStateError } from '../shared/errors.js';

/** A write carried an epoch that is no longer the lease's epoch; it was refused. */
export class FencedWriteError extends BatonError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
    /** The operation refused, by its name in the store contract: `runs.finish`, `checkpoints.write`. */
    readonly what: string,
  ) {
    super(
      'BATON_FENCED_WRITE',
      `run ${runId}: ${what} under epoch ${epoch} refused: a newer owner holds the run`,
    );
  }
}

/** A journal append found another writer's entry after the position it expected. */
export class JournalConflictError extends BatonError {
  constructor(
    readonly runId: string,
    readonly expectedLast: number,
    readonly actualLast: number,
  ) {
    super(
      'BATON_JOURNAL_CONFLICT',
      `run ${runId}: journal append expected last position ${expectedLast} but found ${actualLast}; ` +
        'another writer appended to this run',
    );
  }
}

/** Stored checkpoint or journal bytes could not be decoded or verified. */
export class CheckpointIntegrityError extends BatonError {
  constructor(
    readonly runId: string,
    readonly entry: string,
    detail: string,
    options?: BatonErrorOptions,
    code = 'BATON_INTEGRITY',
  ) {
    super(code, `run ${runId}: ${entry} failed verification: ${detail}`, options);
  }
}

/**
 * A stored checkpoint cannot be read at all: its record is not JSON, or its shape is wrong (entries
 * not a list, a field missing or of the wrong type), as a disk fault or a hand edit leaves it. A
 * subclass of CheckpointIntegrityError (nothing in it can be trusted); a worker first resumes from
 * an older kept checkpoint or the journal, and fails the run with this error only when neither
 * reads. `seq` is undefined when not even the sequence number could be read.
 */
export class CheckpointUnreadableError extends CheckpointIntegrityError {
  constructor(
    runId: string,
    readonly seq: number | undefined,
    detail: string,
    options?: BatonErrorOptions,
  ) {
    super(
      runId,
      seq === undefined ? 'a checkpoint' : `checkpoint ${seq}`,
      `${detail}; resume from an older checkpoint (client.timeTravel.checkpoints, client.timeTravel.fork) or restore the store's data`,
      options,
      'BATON_CHECKPOINT_UNREADABLE',
    );
  }
}

/**
 * A message or journal record is larger than the bus accepts. Never retryable: the same bytes will
 * never fit. A run whose journal entry is too large fails with this reason (and a dead letter
 * names it) rather than re-running the activity forever.
 */
export class PayloadTooLargeError extends BatonError {
  constructor(
    readonly what: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(
      'BATON_TOO_LARGE',
      `${what} is ${size} bytes, above the bus's limit of ${limit} bytes; pass large data by reference ` +
        '(store it elsewhere and journal its key) or raise the server limit (NATS max_payload)',
    );
  }
}

/** Bytes that are not a message or entry this version understands. */
export class CodecError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_CODEC', message, options);
  }
}

/**
 * The refusal of a delete or purge of a run that is not finished (completed, failed or
 * cancelled): retention never removes anything of a run that may still continue.
 */
export function refuseDelete(runId: string, status: string): RunStateError {
  return new RunStateError(
    runId,
    status,
    `run ${runId} is ${status}: only a completed, failed or cancelled run can be deleted; ` +
      'cancel it and wait until it has finished first',
  );
}
