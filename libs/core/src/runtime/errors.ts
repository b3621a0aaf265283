/**
 * The errors the run machinery raises: a replay that diverged from its journal, a lost lease, a
 * resume that kept failing, a checkpoint schema or key this worker lacks, plaintext where
 * encryption is required.
 */
import { BatonError, type BatonErrorOptions } from '../shared/errors.js';
import { CheckpointIntegrityError } from '../adapter/errors.js';

/**
 * On replay the workflow called something other than what the journal recorded at a sequence.
 * Terminal: the run is marked failed, never retried, because the code no longer matches history.
 */
export class NonDeterminismError extends BatonError {
  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(
      'BATON_NON_DETERMINISM',
      `run ${runId}: step #${seq} replayed as ${found} but the journal recorded ${expected}. ` +
        'The workflow code changed in a way that alters the order of ctx calls; deploy the old code for ' +
        'in-flight runs, or guard the change so old runs keep their old path.',
    );
  }
}

/** The worker no longer holds the run's lease (expired, or taken by a newer epoch). */
export class LeaseLostError extends BatonError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
    detail = 'the lease expired or was taken over',
  ) {
    super('BATON_LEASE_LOST', `run ${runId}: lease epoch ${epoch} lost: ${detail}`);
  }
}

/**
 * A run's resume failed on this many claims in a row (each claim's epoch one above the last
 * failed one), so the worker stopped trying: the run is failed with the last error as `cause`
 * (docs/operations.md, "A run failed after repeated resume failures"). `client.timeTravel.retry` runs it again.
 */
export class ResumeFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly failures: number,
    lastError: string,
    options?: BatonErrorOptions,
  ) {
    super(
      'BATON_RESUME_FAILED',
      `run ${runId}: its resume failed on ${failures} claims in a row (the limit, BATON_MAX_RESUME_FAILURES); ` +
        `last error: ${lastError}. Fix the cause, then call client.timeTravel.retry(runId)`,
      options,
    );
  }
}

/**
 * Stored data names a key this process does not hold (removed too early, or never configured
 * here). Nothing is wrong with the data: the worker leaves the run intact and retries later, so
 * an operator can put the key back. A subclass, so code that handles every integrity failure
 * still catches it.
 */
export class MissingKeyError extends CheckpointIntegrityError {
  constructor(
    runId: string,
    entry: string,
    /** The id of the missing key (ids are never secret; keys never appear in messages). */
    readonly keyId: string,
    readonly purpose: 'encryption' | 'signing',
    detail: string,
    options?: BatonErrorOptions,
  ) {
    super(runId, entry, detail, options, 'BATON_MISSING_KEY');
  }
}

/**
 * Data arrived in the clear where encryption is configured and plaintext is not allowed: written
 * before encryption was turned on, by a producer without the keys, or around Baton. A subclass, so
 * code that handles every integrity failure still catches it; the worker dead-letters a run
 * message refused this way with the code `unprotected-payload`.
 */
export class PlaintextRefusedError extends CheckpointIntegrityError {}

/**
 * A checkpoint was written with a schema version this worker cannot read: newer than it knows
 * (a newer Baton wrote it; upgrade this worker), or older with no registered migration. The data
 * is left intact for a worker that can read it.
 */
export class CheckpointSchemaError extends BatonError {
  constructor(
    readonly runId: string,
    readonly checkpointSeq: number,
    readonly schemaVersion: number,
    readonly supportedVersion: number,
    detail: string,
  ) {
    super(
      'BATON_CHECKPOINT_SCHEMA',
      `run ${runId}: checkpoint ${checkpointSeq} has schema version ${schemaVersion}, ` +
        `this worker reads up to version ${supportedVersion}: ${detail}`,
    );
  }
}

/**
 * A query handler (`ctx.onQuery`) called a ctx method: a query reads the run's state and may change
 * nothing, so the call is refused before it takes a step, and the query fails with this error
 * while the run goes on untouched (docs/queries.md).
 */
export class QueryReadOnlyError extends BatonError {
  constructor(
    readonly query: string,
    /** The refused call, `ctx.run`. */
    readonly call: string,
  ) {
    super(
      'BATON_QUERY_READ_ONLY',
      `query '${query}' called ${call}: a query handler only reads the workflow's state, so it may not ` +
        'run activities, sleep, wait, record values, start children or register handlers. Compute the ' +
        'answer from variables the workflow keeps, and change the run with a signal instead',
    );
  }
}
