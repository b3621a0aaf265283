/**
 * One live execution of an activity step: reconcile an in-doubt step, journal the start of a
 * non-idempotent one, run with retries, and journal the outcome before anyone sees it.
 */
import { serializeError } from '../../shared/errors.js';
import { ActivityFailedError, UnencodableValueError } from '../../author/errors.js';
import { runWithRetry, type RetryFailure } from '../../author/retry.js';
import type { ActivityDefinition, ActivityIO } from '../../author/workflow.js';
import { journalsStart } from '../../author/workflow.js';
import type { AppendOptions, ExecutionHost, NewEntry } from './execution-host.js';
import { activityStream } from './streams.js';

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
  /** The run's host; its `heartbeat`, when it has one, hears the activity's heartbeats. */
  host: Pick<ExecutionHost, 'heartbeat' | 'streamWrite'>;
  around?: ExecutionHost['aroundActivityAttempt'];
  /** Throws (and stops the run) when no side effect may start now; see ExecutionHost. */
  mayStart?: ExecutionHost['assertMayStartActivity'];
  /** Before each retry: waits for a place under the step's rate limit (the first attempt's is taken before). */
  beforeRetry?: (() => Promise<void>) | undefined;
}

/** The idempotency key of a step: the same on every attempt, resume and worker. */
export function idempotencyKeyOf(runId: string, seq: number): string {
  return `${runId}:${seq}`;
}

export async function executeActivity<I, O>(exec: ActivityExecution<I, O>): Promise<O> {
  const { def, input, seq, signal, runId } = exec;
  const idempotencyKey = idempotencyKeyOf(runId, seq);
  const host = exec.host;
  const heartbeat = (details: unknown): void => host.heartbeat?.(seq, details);
  const io = (attempt: number, attemptSignal: AbortSignal): ActivityIO => ({
    idempotencyKey,
    attempt,
    signal: attemptSignal,
    runId,
    activity: def.name,
    seq,
    heartbeat,
    stream: (name) => activityStream(host, runId, name, seq, attempt),
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

  const around = exec.around;
  const mayStart = exec.mayStart;
  let outcome: { result: O; attempts: number };
  try {
    outcome = await runWithRetry(
      ({ attempt, signal: attemptSignal }) => {
        mayStart?.();
        if (!around) return def.run(input, io(attempt, attemptSignal));
        return around({ runId, name: def.name, seq, attempt, idempotencyKey }, () => {
          try {
            return Promise.resolve(def.run(input, io(attempt, attemptSignal)));
          } catch (err) {
            return Promise.reject(err as Error);
          }
        });
      },
      {
        policy: def.retry,
        timeoutMs: def.timeoutMs,
        signal,
        name: def.name,
        beforeRetry: exec.beforeRetry,
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
        ...(exec.refreshed === true ? { refreshed: true } : {}),
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
  };
  if (exec.refreshed === true) entry.refreshed = true;
  const checkpoint = def.checkpoint === true;
  // Pipelined, the workflow has the result before its entry is durable: a result that cannot be
  // encoded then ends the run (the append is not marked as one the step replaces).
  if (exec.durableLater === true) exec.append([entry], { checkpoint }).catch(() => undefined);
  else {
    try {
      await exec.append([entry], checkpoint ? RESULT_CHECKPOINT : RESULT);
    } catch (err) {
      return failUnencodableStep(exec, entry, err);
    }
  }
  return outcome.result;
}

/** The options of a step's result append, made once rather than per step. */
const RESULT: AppendOptions = Object.freeze({ checkpoint: false, unencodableFailsStep: true });
const RESULT_CHECKPOINT: AppendOptions = Object.freeze({ checkpoint: true, unencodableFailsStep: true });

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
