/**
 * `client.update` and `handle.update` (docs/updates.md): checks the arguments as the run's worker
 * will (the update's schema, then its definition's validator), hands the request to the store
 * (`updates.request`, waking a suspended run with a wake message), then waits for the outcome the
 * run's owner keeps (`updates.outcome`), polling with backoff as `result()` does.
 *
 * Why the store and not a run message, as signals travel: the caller needs the store anyway to
 * read the answer, and writing the request there tells it at once what a message could not: an
 * unknown run, a finished one, an id already answered (its kept result). A worker that does not
 * know updates never sees a message kind it would dead-letter; it leaves the request unanswered.
 *
 * Invariants:
 * 1. A refused argument sends nothing (InvalidInputError, UpdateRejectedError from the client's own
 *    check); a bad update id is refused by the store's check (ConfigError) before anything is kept.
 * 2. The request is kept once per update id: a repeat (a retry after a timeout, a duplicate
 *    delivery) is answered with the kept outcome, or waits for the same pending request.
 * 3. Every wait ends: at the caller's timeout (UpdateTimeoutError, the request staying with the
 *    run), at a finished run that never answered (RunStateError), or at a run deleted meanwhile.
 * 4. A run that continued as new is followed (docs/continue-as-new.md): a request it refuses with
 *    its successor's id goes to the successor, once it has recorded its end (until then it is
 *    carrying its pending requests over), and a wait for a request it carried over goes on at the
 *    successor; at most MAX_CONTINUATION_HOPS runs, the arguments sealed for each.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import {
  InvalidInputError,
  NotFoundError,
  RunStateError,
  type SerializedError,
  type UpdateDefinition,
} from '@baton/core';
import type { KeptUpdate, Store } from '@baton/core/adapter';
import {
  formatIssuePath,
  isStandardSchema,
  openUpdateOutcome,
  MAX_CONTINUATION_HOPS,
  sealValue,
  wakeMessage,
  type PayloadProtection,
} from '@baton/core/runtime';
import type { Outbox } from './outbox.js';
import { RunDeletedError } from './result-errors.js';
import { UpdateFailedError, UpdateRejectedError, UpdateTimeoutError } from './update-errors.js';

/** Options of `client.update` and `handle.update`. */
export interface UpdateOptions {
  /**
   * Give up waiting for the answer after this long (UpdateTimeoutError); the update still applies
   * once, and a call with the same `updateId` answers its result. @defaultValue 60_000
   */
  timeoutMs?: number;
  /**
   * The request's id (1-256 characters): a repeat with the same id is the same request, answered
   * with the kept result. Give one to make a retry safe. @defaultValue a random UUID
   */
  updateId?: string;
  /**
   * How long a run the store does not know yet (its start still queued) is waited for before
   * NotFoundError. @defaultValue 0 for `client.update`; the timeout for the handle `start()` returned
   */
  unknownRunMs?: number;
  signal?: AbortSignal;
}

/** The default of {@link UpdateOptions.timeoutMs}. */
export const DEFAULT_UPDATE_TIMEOUT_MS = 60_000;
/** How often, at most, a wait reads the run's status besides the outcome (to see it finished). */
const STATUS_EVERY_MS = 1_000;

/** What an update call uses of its client. */
export interface UpdateSources {
  store: Store;
  outbox: Outbox;
  protection: PayloadProtection;
  /** The first poll's interval; doubled after each poll, up to 250 ms. */
  pollIntervalMs: number;
}

/**
 * The arguments to send: the schema's output when the update has one (InvalidInputError listing
 * each issue otherwise), after its definition's validator passed them (UpdateRejectedError).
 */
async function checkedArgs(
  update: UpdateDefinition<unknown, unknown>,
  runId: string,
  updateId: string,
  args: unknown,
): Promise<unknown> {
  let value = args;
  if (update.schema !== undefined) {
    if (!isStandardSchema(update.schema)) {
      throw new InvalidInputError('', ['the update has a schema that is not a Standard Schema'], {
        field: 'args',
        message: `update '${update.name}': its schema is not a Standard Schema; define it with defineUpdate(name, { schema })`,
      });
    }
    const result = await update.schema['~standard'].validate(args);
    if (result.issues !== undefined) {
      const issues = result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
      throw new InvalidInputError('', issues, {
        field: 'args',
        message:
          `arguments of update '${update.name}' to run ${runId} do not match its schema: ${issues.join('; ')}. ` +
          'Fix them (nothing was sent), or change the schema in defineUpdate(name, { schema })',
      });
    }
    value = result.value;
  }
  try {
    const answer = update.validate?.(value) as unknown;
    if (answer !== undefined && typeof (answer as { then?: unknown }).then === 'function') {
      (answer as Promise<unknown>).catch(() => undefined);
    }
  } catch (err) {
    throw new UpdateRejectedError(runId, update.name, updateId, {
      name: 'UpdateRejectedError',
      code: 'BATON_UPDATE_REJECTED',
      message:
        `update '${update.name}' to run ${runId} was rejected by its validator: ` +
        `${err instanceof Error ? err.message : String(err)} (checked before sending; nothing was sent)`,
    });
  }
  return value;
}

/** The handler's result, or the error its kept outcome stands for. */
function answerOf(kept: KeptUpdate, runId: string, protection: PayloadProtection): unknown {
  const outcome = openUpdateOutcome(kept.outcome, runId, protection);
  if (outcome.status === 'completed') return outcome.result;
  const error: SerializedError = outcome.error;
  if (outcome.status === 'rejected') throw new UpdateRejectedError(runId, kept.name, kept.updateId, error);
  throw new UpdateFailedError(runId, kept.name, kept.updateId, error);
}

/** Sends an update and waits for its answer; see {@link UpdateOptions} and the module's invariants. */
export async function callUpdate(
  sources: UpdateSources,
  runId: string,
  update: string | UpdateDefinition<unknown, unknown>,
  args: unknown,
  options: UpdateOptions,
): Promise<unknown> {
  const { store, outbox, protection } = sources;
  const name = typeof update === 'string' ? update : update.name;
  const updateId = options.updateId ?? randomUUID();
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPDATE_TIMEOUT_MS;
  if (!(timeoutMs >= 0))
    throw new RangeError(`client.update: timeoutMs is ${timeoutMs}; it must be 0 or more ms`);
  const started = Date.now();
  const deadline = started + timeoutMs;
  const unknownDeadline = started + Math.min(options.unknownRunMs ?? 0, timeoutMs);
  const value = typeof update === 'string' ? args : await checkedArgs(update, runId, updateId, args);
  const sealFor = (target: string): unknown =>
    sealValue(value, target, 'update args', protection, `arguments of update '${name}' to run ${target}`);
  let sealed = sealFor(runId);
  const operation = `client.update(run ${runId}, '${name}')`;
  let unknownUntil = unknownDeadline;
  const addressed = runId;
  let hops = 0;
  /** Goes on to the successor of the run asked so far (invariant 4). */
  const follow = (successor: string): void => {
    hops++;
    if (hops > MAX_CONTINUATION_HOPS) {
      throw new RunStateError(
        addressed,
        'continued',
        `${operation}: run ${addressed} continued as new more than ${MAX_CONTINUATION_HOPS} times since; ` +
          "send the update to the chain's current run instead",
      );
    }
    runId = successor;
    sealed = sealFor(runId);
  };

  let interval = sources.pollIntervalMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const answer = await outbox.retrying(operation, () =>
      store.updates.request(runId, { updateId, name, args: sealed }),
    );
    if (answer.kept !== undefined) return answerOf(answer.kept, runId, protection);
    if (answer.continuedAs !== undefined) {
      // Its successor may still be on its way: it is waited for as long as the update is.
      if (answer.finished === true) {
        follow(answer.continuedAs);
        unknownUntil = deadline;
        interval = sources.pollIntervalMs;
        continue;
      }
      if (Date.now() >= deadline) throw new UpdateTimeoutError(runId, name, updateId, timeoutMs, 'running');
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())));
      interval = Math.min(interval * 2, 250);
      continue;
    }
    if (answer.finished === true) {
      const status = (await store.runs.get(runId))?.status ?? 'finished';
      throw new RunStateError(
        runId,
        status,
        `${operation}: run ${runId} has finished (${status}); a finished run takes no updates`,
      );
    }
    if (answer.found) {
      if (answer.wake) await outbox.send(operation, wakeMessage(runId, 'update'));
      break;
    }
    const tombstone = await store.retention.tombstone(runId);
    if (tombstone !== undefined) throw new RunDeletedError(runId, tombstone.deletedAt);
    if (Date.now() >= unknownUntil) {
      if (hops > 0) throw new UpdateTimeoutError(runId, name, updateId, timeoutMs, 'pending');
      throw new NotFoundError(
        `${operation}: run ${runId} is not known to the store: it was never started, was deleted, or its ` +
          'start message still waits in the queue (pass { unknownRunMs } to wait for it)',
      );
    }
    await sleep(Math.min(interval, Math.max(0, unknownUntil - Date.now())));
    interval = Math.min(interval * 2, 250);
  }

  interval = sources.pollIntervalMs;
  let statusReadAt = Date.now();
  let status = 'running';
  for (;;) {
    options.signal?.throwIfAborted();
    const kept = await store.updates.outcome(runId, updateId);
    if (kept !== undefined) return answerOf(kept, runId, protection);
    if (Date.now() - statusReadAt >= STATUS_EVERY_MS) {
      statusReadAt = Date.now();
      const run = await store.runs.get(runId);
      if (run === undefined) {
        const tombstone = await store.retention.tombstone(runId);
        if (tombstone !== undefined) throw new RunDeletedError(runId, tombstone.deletedAt);
        throw new NotFoundError(`${operation}: run ${runId} is gone from the store while its update waited`);
      }
      status = run.status;
      if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') {
        // An answer kept just before the end is read once more, then the end is the answer.
        const last = await store.updates.outcome(runId, updateId);
        if (last !== undefined) return answerOf(last, runId, protection);
        // Continued as new before it took the request: the request went on with the rest (invariant 4).
        if (run.continuedAs !== undefined) {
          follow(run.continuedAs);
          continue;
        }
        throw new RunStateError(
          runId,
          run.status,
          `${operation}: run ${runId} ended (${run.status}) before it handled update '${name}' (id ${updateId})`,
        );
      }
    }
    if (Date.now() >= deadline) throw new UpdateTimeoutError(runId, name, updateId, timeoutMs, status);
    await sleep(Math.min(interval, Math.max(0, deadline - Date.now())));
    interval = Math.min(interval * 2, 250);
  }
}
