/**
 * Replay check: before a rollout, replay the journals of runs still in flight against the NEW
 * workflow code and say, run by run, whether a worker running that code could resume it, or would
 * stop it with NonDeterminismError, and at which step.
 *
 * Each run is read the way a worker resumes it (`readRunHistory`: newest readable checkpoint,
 * journal tail, fencing filter, verification, large values read back) and replayed by the worker's
 * own `ReplayExecutor` on a host of this module's that:
 * - never runs an activity: every activity the workflow calls is swapped, before the executor sees
 *   it, for a copy with the same name and options whose `run` and `reconcile` only stop the check;
 * - never writes: an append is answered without going anywhere, and the first entry of a step
 *   (an activity started or finished live, a new timer, a signal wait, a recorded value) means the
 *   code has gone past what the journal recorded, so the check stops there: the run so far is
 *   compatible; the same for a step about to execute live and for a wait the run would suspend on;
 * - runs on the journal's own clock (the time of its newest entry), so a step with `maxAgeMs` is
 *   replayed from its recorded result rather than re-run, and every recorded step is compared.
 *
 * Invariant: nothing is written anywhere (store, bus, payload store), and no activity code runs.
 */
import { ConfigError, type AnyWorkflowDefinition, type ActivityDefinition } from '@baton/core';
import type { ListedRun, RunFilter, Store, Transport, RunStatus } from '@baton/core/adapter';
import {
  isStepEntry,
  openValue,
  readRunHistory,
  ReplayExecutor,
  type ClaimCheck,
  type ExecutionHost,
  type ExecutionOutcome,
  type JournalEntry,
  type PayloadProtection,
} from '@baton/core/runtime';
import type { SerializedError, WorkflowContext } from '@baton/core';

/** The statuses of a run still in flight: what a rollout's new workers would resume. */
export const IN_FLIGHT_STATUSES: readonly RunStatus[] = ['pending', 'running', 'suspended'];

/** Options of {@link FleetApi.replayCheck}. */
export interface ReplayCheckOptions {
  /**
   * The NEW workflow code: every definition a new worker would register (one per name@version);
   * see `loadWorkflows` in `@baton/host` to load them from workflow modules.
   */
  workflows: readonly AnyWorkflowDefinition[];
  /**
   * Which runs to check (a run query's filter). @defaultValue `{ status: ['pending', 'running',
   * 'suspended'] }`: every run in flight
   */
  filter?: RunFilter;
  /** Stop after this many runs (the report says it stopped early). @defaultValue no limit */
  maxRuns?: number;
  /**
   * The longest one run's replay may take before it is reported as an `error` (workflow code that
   * never reaches a ctx call, for instance). @defaultValue 30_000
   */
  runTimeoutMs?: number;
  /** Runs replayed at a time (their reads overlap; the replays share this process). @defaultValue 4 */
  concurrency?: number;
  /** Called after each run, in listing order, with the counts so far and that run's result. */
  onProgress?: (progress: ReplayCheckProgress) => void;
  /** Stops the check between runs; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Where a compatible run's replay ended. */
export type ReplayReach =
  /** The code went past the journal's last step (the next step would execute live). */
  | 'end-of-journal'
  /** The code waits for a timer or a signal the journal has not seen fire yet. */
  | 'waiting'
  /** The workflow function returned within the journal. */
  | 'completed';

/** The run a verdict is about. */
export interface ReplayCheckRunInfo {
  runId: string;
  workflow: string;
  version: number;
  status: RunStatus;
}

/** What the check found for one run. */
export type ReplayVerdict =
  | {
      /** The new code replays the run's whole journal without a disagreement. */
      result: 'ok';
      reached: ReplayReach;
      /** Steps (sequence numbers) the journal holds. */
      journalSteps: number;
      /** The first step past the journal, when `reached` is 'end-of-journal' or 'waiting'. */
      nextSeq?: number;
    }
  | {
      /** A worker on the new code would fail the run with NonDeterminismError at `seq`. */
      result: 'nondeterministic';
      /** The step where code and journal disagree. */
      seq: number;
      /** What the journal recorded at that step (`activity:pull_credit`, `sleep`, `signal:x`, `value:now`), or the entry nobody asked for. */
      expected: string;
      /** What the new code asked for there (`no matching ctx call at this point` when it asked for nothing). */
      found: string;
      /** The error's message, as the run would be failed with it. */
      message: string;
    }
  | {
      /** The new code throws during the replay (not a non-determinism): the run would fail. */
      result: 'failed';
      error: SerializedError;
    }
  | {
      /** The run's workflow name@version is not in the new code: a new worker would not take it. */
      result: 'skipped';
      reason: string;
    }
  | {
      /** The run could not be checked: its history is unreadable, a key is missing, a read failed. */
      result: 'error';
      error: SerializedError;
    };

/** One run's answer: the run, and what the check found. */
export type ReplayCheckRun = ReplayCheckRunInfo & ReplayVerdict;

export type ReplayCheckResultKind = ReplayCheckRun['result'];

/** How many runs ended each way. */
export type ReplayCheckCounts = Record<ReplayCheckResultKind, number> & { checked: number };

/** What {@link ReplayCheckOptions.onProgress} is told after each run. */
export interface ReplayCheckProgress {
  counts: ReplayCheckCounts;
  run: ReplayCheckRun;
}

/** The whole answer: every run checked, in listing order, and the counts. */
export interface ReplayCheckReport {
  runs: ReplayCheckRun[];
  counts: ReplayCheckCounts;
  /** True when `maxRuns` stopped the check with runs (possibly) left in the listing. */
  truncated: boolean;
}

/** What the check needs from the client. */
export interface ReplayCheckDeps {
  store: Store;
  transport: Transport;
  protection: PayloadProtection;
  claimCheck: ClaimCheck | undefined;
}

/** Raised inside the replay when the code reaches past the journal; never leaves this module. */
class EndOfJournal extends Error {
  constructor(readonly seq: number | undefined) {
    super('the replay reached the end of the journal');
  }
}

const NON_DETERMINISM = /step #(\d+) replayed as (.*) but the journal recorded (.*?)\. The workflow code/s;

function emptyCounts(): ReplayCheckCounts {
  return { checked: 0, ok: 0, nondeterministic: 0, failed: 0, skipped: 0, error: 0 };
}

function errorOf(err: unknown): SerializedError {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, ...(typeof code === 'string' && { code }) };
  }
  return { name: 'NonError', message: String(err) };
}

/** Checks every run `options.filter` selects against `options.workflows` (see the module doc). */
export async function replayCheck(
  deps: ReplayCheckDeps,
  options: ReplayCheckOptions,
): Promise<ReplayCheckReport> {
  const byKey = workflowsByKey(options.workflows);
  if (options.maxRuns !== undefined && !(Number.isInteger(options.maxRuns) && options.maxRuns > 0)) {
    throw new ConfigError(
      `replayCheck: maxRuns is ${String(options.maxRuns)}; give a whole number above 0, or leave it out for no limit`,
    );
  }
  const timeoutMs = options.runTimeoutMs ?? 30_000;
  if (!(timeoutMs > 0)) {
    throw new ConfigError(
      `replayCheck: runTimeoutMs is ${String(timeoutMs)}; give a positive number of milliseconds`,
    );
  }
  const concurrency = options.concurrency ?? 4;
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 64)) {
    throw new ConfigError(
      `replayCheck: concurrency is ${String(concurrency)}; give a whole number from 1 to 64`,
    );
  }
  const filter = options.filter ?? { status: IN_FLIGHT_STATUSES };
  const counts = emptyCounts();
  const runs: ReplayCheckRun[] = [];
  let truncated = false;
  let cursor: string | undefined;
  do {
    options.signal?.throwIfAborted();
    const page = await deps.store.runs.list({
      ...filter,
      limit: 200,
      ...(cursor !== undefined && { cursor }),
    });
    cursor = page.cursor;
    let listed = page.runs;
    if (options.maxRuns !== undefined && runs.length + listed.length >= options.maxRuns) {
      const room = options.maxRuns - runs.length;
      truncated = listed.length > room || cursor !== undefined;
      listed = listed.slice(0, room);
      cursor = undefined;
    }
    // `concurrency` replays at a time; results and progress stay in listing order.
    for (let at = 0; at < listed.length; at += concurrency) {
      options.signal?.throwIfAborted();
      const checked = await Promise.all(
        listed.slice(at, at + concurrency).map((run) => checkRun(deps, run, byKey, timeoutMs)),
      );
      for (const run of checked) {
        runs.push(run);
        counts.checked++;
        counts[run.result]++;
        options.onProgress?.({ counts: { ...counts }, run });
      }
    }
  } while (cursor !== undefined);
  return { runs, counts, truncated };
}

/** name@version -> definition; two different definitions of one name@version are refused. */
function workflowsByKey(workflows: readonly AnyWorkflowDefinition[]): Map<string, AnyWorkflowDefinition> {
  const byKey = new Map<string, AnyWorkflowDefinition>();
  for (const definition of workflows) {
    const key = `${definition.name}@${definition.version}`;
    const known = byKey.get(key);
    if (known !== undefined && known !== definition) {
      throw new ConfigError(
        `replayCheck: workflow ${key} is given twice with two different definitions; pass exactly one per name@version`,
      );
    }
    byKey.set(key, definition);
  }
  return byKey;
}

/** One run: read its history, replay it on the checking host, classify the outcome. */
async function checkRun(
  deps: ReplayCheckDeps,
  run: ListedRun,
  byKey: Map<string, AnyWorkflowDefinition>,
  timeoutMs: number,
): Promise<ReplayCheckRun> {
  const base: ReplayCheckRunInfo = {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
  };
  const workflow = byKey.get(`${run.workflow}@${run.version}`);
  if (workflow === undefined) {
    const versions = [...byKey.values()]
      .filter((w) => w.name === run.workflow)
      .map((w) => w.version)
      .sort((a, b) => a - b);
    const reason =
      versions.length === 0
        ? `workflow ${run.workflow} is not in the new code: a new worker would not take this run`
        : `workflow ${run.workflow}@${run.version} is not in the new code (it has version ${versions.join(', ')}): ` +
          'a new worker would put this run back for a worker that has its version';
    return { ...base, result: 'skipped', reason };
  }
  let entries: JournalEntry[];
  let input: unknown;
  try {
    // The input is sealed in the record when the fleet seals values (docs/integrity.md).
    input = openValue(run.input, run.runId, 'run input', deps.protection);
    const history = await readRunHistory({
      store: deps.store.checkpoints,
      journal: deps.transport.journal,
      runId: run.runId,
      protection: deps.protection,
      journalFallback: deps.transport.journal.scansSharedLog !== true && run.forkedFrom === undefined,
      ...(deps.claimCheck !== undefined && { claimCheck: deps.claimCheck }),
    });
    entries = history.resolved;
  } catch (err) {
    return { ...base, result: 'error', error: errorOf(err) };
  }
  return { ...base, ...(await replay(workflow, { ...run, input }, entries, timeoutMs)) };
}

/** Replays `entries` with `workflow` on a host that writes nothing and runs no activity. */
async function replay(
  workflow: AnyWorkflowDefinition,
  run: ListedRun,
  entries: readonly JournalEntry[],
  timeoutMs: number,
): Promise<ReplayVerdict> {
  const steps = new Set<number>();
  let journalTime = 0;
  let highestSeq = -1;
  for (const entry of entries) {
    if (isStepEntry(entry)) {
      steps.add(entry.seq);
      highestSeq = Math.max(highestSeq, entry.seq);
    }
    if (typeof entry.at === 'number') journalTime = Math.max(journalTime, entry.at);
  }
  // The host stops the executor it serves, which is built after the host.
  const running: { executor?: ReplayExecutor } = {};
  let reached: EndOfJournal | undefined;
  const stopAtEnd = (seq: number | undefined): EndOfJournal => {
    reached ??= new EndOfJournal(seq);
    running.executor?.abort(reached);
    return reached;
  };
  const host: ExecutionHost = {
    runId: run.runId,
    append: (newEntries) => {
      // A step's entry: the code has gone past what the journal recorded (or a recorded wait
      // would complete now). Everything before it replayed; stop. A patch marker goes on.
      for (const entry of newEntries) {
        if ('seq' in entry) return Promise.reject(stopAtEnd(entry.seq));
      }
      return Promise.resolve();
    },
    clock: () => (journalTime > 0 ? journalTime : Date.now()),
    readSignals: () => Promise.resolve([]),
    suspend: () => Promise.resolve({ ok: true }),
    // A live ctx.setAttributes is past the journal, as a live activity is: stop before writing.
    setAttributes: () => Promise.reject(stopAtEnd(undefined)),
    assertMayStartActivity: () => {
      throw stopAtEnd(undefined);
    },
  };
  const executor = new ReplayExecutor({
    workflow: inertActivities(workflow, () => stopAtEnd(undefined)),
    input: run.input,
    runId: run.runId,
    history: entries,
    host,
    inProcessWaitMs: 0,
  });
  running.executor = executor;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  let outcome: ExecutionOutcome | 'timeout';
  try {
    outcome = await Promise.race([executor.run(), timedOut]);
  } finally {
    clearTimeout(timer);
  }
  if (outcome === 'timeout') {
    executor.abort(new Error('replay check timed out'));
    return {
      result: 'error',
      error: {
        name: 'TimeoutError',
        message:
          `the replay of run ${run.runId} did not finish within ${timeoutMs} ms: its code waits on something ` +
          'other than a ctx call, or does a lot of work; raise runTimeoutMs to give it longer',
      },
    };
  }
  const journalSteps = steps.size;
  const pastJournal = highestSeq + 1;
  switch (outcome.kind) {
    case 'completed':
      return { result: 'ok', reached: 'completed', journalSteps };
    case 'suspended':
      return { result: 'ok', reached: 'waiting', journalSteps, nextSeq: pastJournal };
    case 'stopped':
      if (outcome.cause instanceof EndOfJournal) {
        return {
          result: 'ok',
          reached: 'end-of-journal',
          journalSteps,
          nextSeq: outcome.cause.seq ?? pastJournal,
        };
      }
      return { result: 'error', error: errorOf(outcome.cause) };
    case 'cancelled':
      // No cancel is ever requested of a check; a workflow cannot cancel itself.
      return {
        result: 'error',
        error: { name: 'Error', message: `unexpected cancellation: ${outcome.reason}` },
      };
    case 'failed': {
      if (!outcome.nonDeterminism) return { result: 'failed', error: withoutStack(outcome.error) };
      const match = NON_DETERMINISM.exec(outcome.error.message);
      return {
        result: 'nondeterministic',
        seq: match ? Number(match[1]) : -1,
        found: match?.[2] ?? 'unknown',
        expected: match?.[3] ?? 'unknown',
        message: outcome.error.message,
      };
    }
  }
}

function withoutStack(error: SerializedError): SerializedError {
  const { stack: _stack, ...rest } = error;
  return rest;
}

/**
 * The workflow as the check runs it: every activity it calls through `ctx.run` or `ctx.activity`
 * keeps its name and options (so the step identities and the journaling are the same) but its
 * `run` and `reconcile` only stop the check: no activity code runs, even for a step in doubt. Its
 * rate limit is dropped: a limit is no step, and a live step ends the check before it could ask.
 */
function inertActivities(workflow: AnyWorkflowDefinition, stop: () => Error): AnyWorkflowDefinition {
  const inert = <I, O>(def: ActivityDefinition<I, O>): ActivityDefinition<I, O> => ({
    ...def,
    // The check asks no store for a place: the first live step ends it anyway.
    rateLimit: undefined,
    run: () => {
      throw stop();
    },
    ...(def.reconcile !== undefined && {
      reconcile: () => {
        throw stop();
      },
    }),
  });
  const wrap = (ctx: WorkflowContext): WorkflowContext =>
    new Proxy(ctx, {
      get(target, property, receiver) {
        if (property === 'run') {
          return <I, O>(
            def: ActivityDefinition<I, O>,
            input: I,
            opts?: Parameters<WorkflowContext['run']>[2],
          ) => target.run(inert(def), input, opts);
        }
        if (property === 'activity') {
          return <O>(name: string, _fn: unknown, opts?: Parameters<WorkflowContext['activity']>[2]) =>
            target.activity<O>(
              name,
              () => {
                throw stop();
              },
              opts,
            );
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
  return {
    ...workflow,
    run: (ctx: WorkflowContext, input: unknown) => workflow.run(wrap(ctx), input),
  } as AnyWorkflowDefinition;
}
