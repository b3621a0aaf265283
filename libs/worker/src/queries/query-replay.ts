/**
 * The answer to a query of a run this worker does not hold (suspended, paused, finished, or held
 * by a worker that did not answer): its journal replayed by a replay-only executor (core's
 * replay-executor.ts, invariant 13) and the query's handler asked at the journal's end.
 *
 * Invariant: nothing is written anywhere and nothing of the run's runs. The history is read the
 * way a worker resumes a run (newest readable checkpoint, journal tail, fencing filter,
 * verification, large values read back) but without the fence marker a claim appends first, so
 * no lease, journal, checkpoint or timer is touched; the executor's host refuses every call
 * (`noHost`), and the executor never makes one in replay-only mode.
 */
import { NotFoundError, type AnyWorkflowDefinition } from '@baton/core';
import type { QueryReply } from '@baton/core/adapter';
import {
  openValue,
  readRunHistory,
  ReplayExecutor,
  serializeError,
  type ExecutionHost,
} from '@baton/core/runtime';
import type { ResolvedWorkerOptions } from '../options.js';

/** What a replay uses of the worker. */
export type QueryReplayDeps = Pick<
  ResolvedWorkerOptions,
  'transport' | 'store' | 'payloadProtection' | 'claimCheck' | 'inProcessWaitMs'
>;

/**
 * Replays run `runId` of `workflow` to its journal's end and asks its query `name` with `args`
 * (opened already). Everything that goes wrong is the reply, never a throw: an unknown run, an
 * unreadable history, a replay the code no longer matches, a replay longer than `timeoutMs`.
 */
export async function answerByReplay(
  deps: QueryReplayDeps,
  workflow: AnyWorkflowDefinition,
  runId: string,
  name: string,
  args: unknown,
  timeoutMs: number,
): Promise<QueryReply> {
  try {
    const run = await deps.store.runs.get(runId);
    if (run === undefined)
      throw new NotFoundError(`run ${runId} is not in the store (deleted, or never started)`);
    const history = await readRunHistory({
      store: deps.store.checkpoints,
      journal: deps.transport.journal,
      runId,
      protection: deps.payloadProtection,
      journalFallback: deps.transport.journal.scansSharedLog !== true && run.forkedFrom === undefined,
      claimCheck: deps.claimCheck,
    });
    const executor = new ReplayExecutor({
      workflow,
      input: openValue(run.input, runId, 'run input', deps.payloadProtection),
      runId,
      history: history.resolved,
      host: noHost(runId),
      inProcessWaitMs: deps.inProcessWaitMs,
      replayOnly: true,
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const end = await Promise.race([executor.replayToEnd(), late]).finally(() => clearTimeout(timer));
    if (end === 'late') {
      return failed(
        'BATON_QUERY_REPLAY_TIMEOUT',
        `the replay of run ${runId} to answer query '${name}' did not reach the journal's end within ${timeoutMs} ms: ` +
          'its code waits on something other than a ctx call, or does much work; give the query a longer timeout',
      );
    }
    if (end.error !== undefined) return { status: 'failed', error: serializeError(end.error) };
    return executor.answerQuery(name, args);
  } catch (err) {
    return { status: 'failed', error: serializeError(err) };
  }
}

function failed(code: string, message: string): QueryReply {
  return { status: 'failed', error: { name: 'QueryReplayError', code, message } };
}

/** A host for an executor that never calls it (replay-only): any call is a bug, refused loudly. */
function noHost(runId: string): ExecutionHost {
  const refuse = (call: string) => (): never => {
    throw new Error(`run ${runId}: a replay for a query called host.${call}; replay-only writes nothing`);
  };
  return {
    runId,
    append: refuse('append'),
    suspend: refuse('suspend'),
    readSignals: refuse('readSignals'),
    takeRateToken: refuse('takeRateToken'),
    startChild: refuse('startChild'),
    assertMayStartActivity: refuse('assertMayStartActivity'),
    // ctx.now() past the journal's end is not recorded (replay-only): the time of the answer.
    clock: () => Date.now(),
  };
}
