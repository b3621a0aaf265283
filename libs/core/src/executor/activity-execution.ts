/**
 * One live execution of an activity step: reconcile an in-doubt step, journal the start of a
 * non-idempotent one, run with retries, and journal the outcome before anyone sees it.
 */
import { ActivityFailedError, serializeError, UnencodableValueError } from '../errors.js';
import { runWithRetry, type RetryFailure } from '../retry.js';
import type { ActivityDefinition, ActivityIO } from '../workflow.js';
import { journalsStart } from '../workflow.js';
import type { AppendOptions, ExecutionHost, NewEntry } from './execution-host.js';

export interface ActivityExecution<I, O> {
  def: ActivityDefinition<I, O>;
  input: I;
  seq: number;
  runId: string;
  /** The journal shows ActivityStarted without a completion: the step may have had its effect. */
  inDoubt: boolean;
  /** A freshness re-run of a step whose journaled result aged past `maxAgeMs`. */
  refreshed?: boolean;
  /**
   * Return the result without waiting for its ActivityCompleted entry to be durable (pipelined
   * steps); the executor tracks the append and stops the run if it fails.
   */
  durableLater?: boolean;
  /** Aborted on cancel, lease loss or shutdown; an aborted execution journals nothing. */
  signal: AbortSignal;
  append(entries: NewEntry[], options?: AppendOptions): Promise<void>;
  heartbeat(details: unknown): void;
  around?: ExecutionHost['aroundActivityAttempt'];
  /** Throws (and stops the run) when no side effect may start now; see ExecutionHost. */
  mayStart?: ExecutionHost['assertMayStartActivity'];
}

/** The idempotency key of a step: the same on every attempt, resume and worker. */
export function idempotencyKeyOf(runId: string, seq: number): string {
  return `${runId}:${seq}`;
}

export async function executeActivity<I, O>(exec: ActivityExecution<I, O>): Promise<O> {
  const { def, input, seq, signal } = exec;
  const refreshMark = exec.refreshed === true ? { refreshed: true } : {};
  const io = (attempt: number, attemptSignal: AbortSignal): ActivityIO => ({
    idempotencyKey: idempotencyKeyOf(exec.runId, seq),
    attempt,
    signal: attemptSignal,
    runId: exec.runId,
    activity: def.name,
    seq,
    heartbeat: exec.heartbeat,
  });

  if (exec.inDoubt && def.reconcile) {
    const found = await def.reconcile(input, io(0, signal));
    signal.throwIfAborted();
    if (found !== undefined) {
      const reconciled: ResultEntry = {
        type: 'ActivityCompleted',
        seq,
        name: def.name,
        result: found,
        attempts: 0,
        reconciled: true,
      };
      try {
        await exec.append([reconciled], { unencodableFailsStep: true });
      } catch (err) {
        return failUnencodableStep(exec, reconciled, err);
      }
      return found;
    }
  }
  if (journalsStart(def) && !exec.inDoubt) {
    await exec.append([{ type: 'ActivityStarted', seq, name: def.name }]);
  }

  let outcome: { result: O; attempts: number };
  try {
    outcome = await runWithRetry(
      ({ attempt, signal: attemptSignal }) => {
        exec.mayStart?.();
        if (!exec.around) return def.run(input, io(attempt, attemptSignal));
        const run = async (): Promise<O> => def.run(input, io(attempt, attemptSignal));
        const info = {
          runId: exec.runId,
          name: def.name,
          seq,
          attempt,
          idempotencyKey: idempotencyKeyOf(exec.runId, seq),
        };
        return exec.around(info, run);
      },
      {
        policy: def.retry,
        timeoutMs: def.timeoutMs,
        signal,
        name: def.name,
      },
    );
  } catch (caught) {
    const failure = caught as RetryFailure;
    if (signal.aborted) throw signal.reason;
    await exec.append([
      {
        type: 'ActivityFailed',
        seq,
        name: def.name,
        error: serializeError(failure.error),
        attempts: failure.attempts,
        ...refreshMark,
      },
    ]);
    throw new ActivityFailedError(def.name, seq, failure.attempts, failure.error);
  }
  signal.throwIfAborted();
  const entry: ResultEntry = {
    type: 'ActivityCompleted',
    seq,
    name: def.name,
    result: outcome.result,
    attempts: outcome.attempts,
    ...refreshMark,
  };
  const checkpoint = def.checkpoint === true;
  // Pipelined, the workflow has the result before its entry is durable: a result that cannot be
  // encoded then ends the run (the append is not marked as one the step replaces).
  if (exec.durableLater === true) exec.append([entry], { checkpoint }).catch(() => undefined);
  else {
    try {
      await exec.append([entry], { checkpoint, unencodableFailsStep: true });
    } catch (err) {
      return failUnencodableStep(exec, entry, err);
    }
  }
  return outcome.result;
}

type ResultEntry = Extract<NewEntry, { type: 'ActivityCompleted' }>;

/**
 * After a step's result append failed: a result with no JSON form (UnencodableValueError) fails
 * the step, once. ActivityFailed records the error (so a replay fails it the same way and never
 * runs the activity again) and the workflow's call rejects with ActivityFailedError around it.
 * Any other error is rethrown as it was.
 */
async function failUnencodableStep(
  exec: Pick<ActivityExecution<unknown, unknown>, 'append'>,
  entry: ResultEntry,
  err: unknown,
): Promise<never> {
  if (!(err instanceof UnencodableValueError)) throw err;
  const { seq, name, attempts } = entry;
  const refreshed = entry.refreshed === true ? { refreshed: true } : {};
  await exec.append([
    { type: 'ActivityFailed', seq, name, error: serializeError(err), attempts, ...refreshed },
  ]);
  throw new ActivityFailedError(name, seq, attempts, err);
}
