/**
 * The replay executor: runs a workflow function against its journal.
 *
 * Invariants:
 * 1. Every ctx call takes the next sequence number synchronously, at call time, so numbering
 *    follows the code's call order, never completion order.
 * 2. Journaled completions are delivered one at a time, in journal order, each after the
 *    workflow has gone idle; so a replay takes exactly the path the original execution took.
 * 3. A live result reaches the workflow only after its journal append is durable (with
 *    `pipelineSteps`, an idempotent activity's result may come first; see ExecutorOptions), and
 *    not before every journaled completion has been delivered.
 * 4. A step whose code and history disagree stops the run with NonDeterminismError; user code
 *    cannot catch it and carry on.
 * 5. Once stopped (lease lost, hand-off, finish), nothing more is appended.
 * 6. ctx.patched() takes no sequence number: a patch check added to the code leaves the numbering
 *    of every step, recorded or not, as it was. Its answer depends only on the journal (a marker
 *    for the change, or steps recorded at or after the current one), so every replay repeats it.
 * 7. A freshness re-run (maxAgeMs) happens at the stale completion's place in the delivery order,
 *    and no later completion is delivered before its result: the workflow sees the new value
 *    exactly where it saw the old one, which is where every later replay delivers it again.
 * 8. A rate-limited step asks the store for a place before each live attempt, never for a step
 *    history settled. A refused step waits (rate-waits.ts) without a journal entry or a sequence
 *    number of its own, so whether, how long and how often it waited changes nothing a replay
 *    sees; a crash mid-wait loses nothing (the step is live again on resume and asks again).
 * 9. A signal wait with a schema never hands the workflow a payload the schema refuses; it skips it
 *    and goes on waiting. The skip is not journaled: it follows from the payload and the schema,
 *    so every resume skips it again, and a completed wait replays its journaled value unchecked
 *    (pending-waits.ts).
 * 10. An update is checked before it is journaled, accepted only at an idle point with no append
 *    pending, one per turn, and its handler started in that turn; a replay starts it again at its
 *    UpdateAccepted's place among the completions. The run ends only once its accepted handlers
 *    have settled and their outcomes are kept (updates.ts).
 * 11. A durable promise's token is drawn once and journaled (PromiseCreated), and its store record
 *    is written beside the entry; no activity starts, pipelined or not, before both are durable,
 *    so a token never leaves the run before it can be completed (author/promise.ts).
 * 12. Query handlers (ctx.onQuery) take no sequence number and append nothing, and no ctx call
 *    gets through while one runs (query-handlers.ts): answering a query never changes the run.
 * 13. Replay-only (`replayOnly`, for answering a query of a run nobody holds): nothing is appended,
 *    no activity or freshness re-run starts, no timer, signal or lease is asked for; the executor
 *    delivers the journal's completions and stops at its end (`replayToEnd`). Steps past the end
 *    stay pending for ever, as they were when the journal ended.
 * 14. ctx.setAttributes writes the store before it journals AttributesSet, so a journaled change
 *    is always in the store and its replay writes nothing; a crash between the two leaves the
 *    step live, and its replay writes the same values again (the write is a merge, so repeating
 *    it changes nothing). A call refused by its checks takes no sequence number.
 */
import { setMaxListeners } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { toMs } from '../../author/duration.js';
import { BatonError } from '../../shared/errors.js';
import type { HistoryInfo, ValueRecordedEntry } from '../../shared/journal.js';
import { attributeChanges, type AttributeChanges } from '../../shared/attributes.js';
import { CancelledError, UnencodableValueError } from '../../author/errors.js';
import { NonDeterminismError } from '../errors.js';
import type { RateLimitRequest } from '../../adapter/contracts/rate-limits.js';
import type { ActivityDefinition, ActivityOptions, WorkflowContext } from '../../author/workflow.js';
import { checkFreshness, defineActivity, journalsStart } from '../../author/workflow.js';
import { signalName } from '../../author/signal.js';
import type { AnyUpdateDefinition, UpdateValidator } from '../../author/update.js';
import { promiseJsonSchema, type DurablePromise, type PromiseOptions } from '../../author/promise.js';
import type { StandardSchemaV1 } from '../../author/standard-schema.js';
import { ContinueAsNew, isContinueAsNew } from '../../author/continue-as-new.js';
import { continuedResult } from '../run-keys.js';
import { executeActivity, type ActivityExecution } from './activity-execution.js';
import { ReplayHistory, settleFromHistory, type StepHistory } from './history.js';
import {
  failedOutcome,
  settledOutcome,
  type AppendOptions,
  type ExecutionHost,
  type ExecutionOutcome,
  type ExecutorOptions,
  type NewEntry,
  type NewPromise,
  type Settled,
} from './execution-host.js';
import { childWorkflowMethods } from './child-workflows.js';
import { LoopWake } from './loop-wake.js';
import { Refreshes } from './freshness.js';
import { PatchAnswers } from './patch-answers.js';
import { PendingWaits, type RefusedSignal, type Settle } from './pending-waits.js';
import { RateWaits } from './rate-waits.js';
import { RunUpdates, updatesInHistory } from './updates.js';
import { WorkflowStreams } from './streams.js';
import { QueryHandlers, type QueryAnswer } from './query-handlers.js';

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

const idle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ReplayExecutor {
  private readonly history: ReplayHistory | undefined;
  private readonly host: ExecutionHost;
  /** The host's attempt wrapper, bound once per run rather than once per step. */
  private readonly around: ExecutionHost['aroundActivityAttempt'];
  /** The host's lease check before a side effect, bound once per run. */
  private readonly mayStart: ExecutionHost['assertMayStartActivity'];
  private readonly inProcessWaitMs: number;
  private nextSeq = 0;
  private state: 'running' | 'freezing' | 'stopped' = 'running';
  private replayDone = false;
  private readonly pending = new Map<number, Settle>();
  /** Replayed steps that may need a freshness re-run, by seq; decided when their turn comes. */
  private readonly refreshes = new Refreshes();
  private readonly patchAnswers: PatchAnswers;
  private readonly waits: PendingWaits;
  /** Rate-limited steps: their asks, and the waits of those the store refused (invariant 8). */
  private readonly rateWaits: RateWaits;
  /** Update requests, their handlers and outcomes (invariant 10). */
  private readonly updates: RunUpdates;
  private readonly deferred: Array<() => void> = [];
  /**
   * One signal for every activity of the run: aborted on cancel, lease loss or finish. (Per-
   * activity controllers cost an allocation per step for nothing: all of them abort together.)
   */
  private readonly activityAbort = new AbortController();
  private inFlight = 0;
  private pendingAppends = 0;
  /** Entries this execution asked the host to append (ctx.historyInfo() on a host that counts none). */
  private appendedEntries = 0;
  /** Promise records being written (invariant 11); counted in pendingAppends too. */
  private promiseWrites = 0;
  /** Settles once every promise record written so far is durable. */
  private promiseRecords: Promise<unknown> = Promise.resolve();
  /** The attribute names the run holds after the ctx.setAttributes calls so far (for the limit). */
  private readonly attributeNames = new Set<string>();
  private fatal: Error | undefined;
  private stopCause: unknown;
  private cancelReason: string | undefined;
  private settled: Settled | undefined;
  /** Wakes the loop in run() whenever anything it looks at changes. */
  private readonly wake = new LoopWake();
  /** ctx.onQuery's handlers, and the guard that keeps them read-only (invariant 12). */
  private readonly queries = new QueryHandlers();
  /** Replay-only: for a query of a run nobody holds (invariant 13). */
  private readonly replayOnly: boolean;
  /** ctx.stream's writers (streams.ts), made on the first call. */
  private streams: WorkflowStreams | undefined;
  readonly ctx: WorkflowContext;

  constructor(private readonly options: ExecutorOptions) {
    // Every activity attempt listens on the run's one signal: a fan-out of more than ten would
    // trip Node's "possible EventTarget memory leak" warning, though the listeners are bounded by
    // the run's parallelism and removed as attempts end.
    setMaxListeners(0, this.activityAbort.signal);
    this.host = options.host;
    this.around = this.host.aroundActivityAttempt?.bind(this.host);
    this.mayStart = this.host.assertMayStartActivity?.bind(this.host);
    this.inProcessWaitMs = options.inProcessWaitMs ?? 1000;
    this.replayOnly = options.replayOnly === true;
    let history: ReplayHistory | undefined;
    try {
      history = new ReplayHistory(options.runId, options.history);
    } catch (err) {
      this.fatal = err as Error;
    }
    this.history = history;
    this.patchAnswers = new PatchAnswers(history);
    this.waits = new PendingWaits(options.runId, new Set(history?.consumedSignalIds));
    if (options.cancelRequested) this.cancelReason = options.cancelReason ?? 'cancel requested';
    this.rateWaits = new RateWaits({
      runId: options.runId,
      host: this.host,
      signal: this.activityAbort.signal,
      wake: this.wake,
      isRunning: () => this.state === 'running' && !this.fatal,
      cancelReason: () => this.cancelReason,
      countInFlight: (delta) => {
        this.inFlight += delta;
      },
      abort: (cause) => this.abort(cause),
    });
    this.updates = new RunUpdates(
      {
        runId: options.runId,
        workflow: `${options.workflow.name}@${options.workflow.version}`,
        host: this.host,
        wake: this.wake,
        isRunning: () => this.state === 'running' && !this.fatal,
        mayWrite: () => this.state !== 'stopped' && !this.fatal,
        nextSeq: () => this.nextSeq,
        append: (entries) => this.append(entries),
        flushAppends: () => this.flushAppends(),
        countInFlight: (delta) => {
          this.inFlight += delta;
        },
        fail: (error) => this.fail(error),
        abort: (cause) => this.abort(cause),
      },
      updatesInHistory(options.history),
    );
    this.ctx = this.createContext();
  }

  /** Runs the workflow until it finishes, suspends or is stopped. Call once. */
  async run(): Promise<ExecutionOutcome> {
    if (!this.fatal) this.startWorkflow();
    let idleStrikes = 0;
    for (;;) {
      await idle();
      if (this.fatal) return this.finishWith(failedOutcome(this.fatal));
      if (this.state === 'stopped') return { kind: 'stopped', reason: 'aborted', cause: this.stopCause };
      if (this.state === 'freezing') {
        if (this.inFlight === 0 && this.pendingAppends === 0)
          return this.finishWith({ kind: 'stopped', reason: 'handoff' });
        await this.wake.next();
        continue;
      }
      // A run whose workflow returned still ends only once its accepted updates are answered.
      if (this.settled && !this.updates.busy) {
        // Pipelined: the outcome goes to the host at once; the host journals the terminal entry
        // after every pending one (the worker's journal writer keeps call order and refuses
        // anything after a failed record), so the run still ends only with everything durable.
        if (this.pendingAppends > 0 && this.options.pipelineSteps !== true) {
          await this.wake.next();
          continue;
        }
        return this.finishWith(this.continued(settledOutcome(this.settled, this.cancelReason)));
      }
      if (this.refreshes.running) {
        await this.wake.next();
        continue;
      }
      if (this.history?.hasUndelivered) {
        this.deliverNextCompletion();
        continue;
      }
      if (!this.replayDone) {
        this.replayDone = true;
        for (const settle of this.deferred.splice(0)) settle();
        // The workflow registered its handlers by now: read the requests that wait (the run may
        // have been woken for one).
        if (this.updates.hasHandlers || this.options.updateRequested === true) this.updates.read();
        continue;
      }
      if (
        this.updates.hasReady &&
        this.pendingAppends === 0 &&
        this.settled === undefined &&
        this.state === 'running'
      ) {
        this.updates.decideNext();
        continue;
      }
      if (this.inFlight > 0 || this.pendingAppends > 0) {
        await this.wake.next();
        continue;
      }
      if (this.waits.size > 0 || this.rateWaits.size > 0) {
        idleStrikes = 0;
        const outcome = await this.handleWaits();
        if (outcome) return outcome;
        continue;
      }
      // Nothing Baton knows of is pending, yet the workflow has not settled: it awaits a promise
      // that no ctx call made (a raw setTimeout, fetch, ...). Give it a couple of turns, then fail.
      if (++idleStrikes > 3) {
        this.fatal = new BatonError(
          'BATON_WORKFLOW_BLOCKED',
          `run ${this.options.runId}: the workflow is waiting on something that is not a ctx call; ` +
            'do I/O and timers only through ctx.run/ctx.activity/ctx.sleep',
        );
      }
    }
  }

  /**
   * Whether the workflow registered an update handler: its owner then tells it of new requests
   * ({@link updatesArrived}) and checks for any after the run suspends.
   */
  get acceptsUpdates(): boolean {
    return this.updates.hasHandlers;
  }

  /** The store holds update requests for this run, maybe new ones: read them. */
  updatesArrived(): void {
    if (this.state === 'running' && !this.fatal && this.replayDone) this.updates.read();
  }

  /**
   * Replay-only (invariant 13): runs the workflow over its journal, delivering every journaled
   * completion in order, and resolves once the last one was delivered and the workflow had its turn
   * after it. `settled` is true when the workflow function returned or threw within the journal;
   * `error` is a replay that could not go on (a non-determinism, an unreadable history). Call once,
   * instead of run().
   */
  async replayToEnd(): Promise<{ settled: boolean; error?: Error }> {
    if (!this.replayOnly) throw new Error('replayToEnd() is for an executor built with replayOnly');
    if (!this.fatal) this.startWorkflow();
    for (;;) {
      await idle();
      if (this.fatal) {
        this.finishWith({ kind: 'stopped', reason: 'aborted' });
        return { settled: this.settled !== undefined, error: this.fatal };
      }
      if (this.history?.hasUndelivered) {
        this.deliverNextCompletion();
        continue;
      }
      this.finishWith({ kind: 'stopped', reason: 'aborted' });
      return { settled: this.settled !== undefined };
    }
  }

  /**
   * Answers the query `name` from the workflow's state now, with the handler `ctx.onQuery`
   * registered (invariant 12): synchronously, between two turns of the workflow.
   */
  answerQuery(name: string, args: unknown): QueryAnswer {
    return this.queries.answer(name, args);
  }

  /** True once a cancel reached the run (at its start or since): its workflow code sees it. */
  get cancelling(): boolean {
    return this.cancelReason !== undefined;
  }

  /** Cancel: pending waits and live activities reject with CancelledError, as do later ctx calls. */
  requestCancel(reason = 'cancel requested'): void {
    if (this.cancelReason !== undefined && this.activityAbort.signal.aborted) return;
    this.cancelReason ??= reason;
    const error = new CancelledError(this.options.runId, this.cancelReason);
    this.waits.rejectAll(error);
    this.rateWaits.rejectAll(error);
    this.activityAbort.abort(error);
    this.wake.notify();
  }

  /** Stops at once (lease lost, worker crash): activities are aborted, nothing more is journaled. */
  abort(cause: unknown): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopCause = cause;
    this.activityAbort.abort(cause);
    this.wake.notify();
  }

  /**
   * Hand-off: freezes the workflow (no new steps start, no result reaches it) and lets in-flight
   * activities finish and journal; `run()` then resolves `{ kind: 'stopped', reason: 'handoff' }`.
   */
  handoff(): void {
    if (this.state === 'running') this.state = 'freezing';
    this.wake.notify();
  }

  // -------------------------------------------------------------------------------------------

  /** A workflow that returned ctx.continueAsNew completes with its successor as the result. */
  private continued(outcome: ExecutionOutcome): ExecutionOutcome {
    if (outcome.kind !== 'completed' || !isContinueAsNew(outcome.result)) return outcome;
    const { workflow, runId } = this.options;
    try {
      return { kind: 'completed', result: continuedResult(runId, workflow, outcome.result) };
    } catch (err) {
      return failedOutcome(err as Error);
    }
  }

  /**
   * The run's `ctx`. Each method refuses first while a query handler runs (query-handlers.ts,
   * invariant 4): written into every method here, one closure each, rather than wrapped around them.
   */
  private createContext(): WorkflowContext {
    const { workflow, runId } = this.options;
    const queries = this.queries;
    const refuse = (method: string): void => queries.refuseWhileAnswering(method);
    const children = childWorkflowMethods(() => this.ctx, this.host);
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    return {
      runId,
      workflow: workflow.name,
      version: workflow.version,
      get isReplaying() {
        return !self.replayDone;
      },
      run: (activity, input, options) => {
        refuse('run');
        return this.callActivity(activity, input, options);
      },
      activity: (name, fn, options) => {
        refuse('activity');
        return this.callActivity(
          defineActivity({ name, run: (_input: unknown, io) => fn(io), ...options }),
          undefined,
        );
      },
      sleep: (duration) => {
        refuse('sleep');
        return this.sleep(duration);
      },
      promise: (options) => {
        refuse('promise');
        return this.promise(options);
      },
      waitForSignal: (signal, options) => {
        refuse('waitForSignal');
        return this.waitForSignal(
          signalName(signal),
          options?.timeout,
          typeof signal === 'string' ? undefined : signal.schema,
        ) as never;
      },
      setAttributes: (values) => {
        refuse('setAttributes');
        return this.setAttributes(values);
      },
      now: () => {
        refuse('now');
        return this.recordValue('now', () => this.host.clock()) as number;
      },
      random: () => {
        refuse('random');
        return this.recordValue('random', Math.random) as number;
      },
      uuid: () => {
        refuse('uuid');
        return this.recordValue('uuid', randomUUID) as string;
      },
      historyInfo: () => {
        refuse('historyInfo');
        return { ...(this.recordValue('historyInfo', this.liveHistoryInfo) as HistoryInfo) };
      },
      stream: (name) => {
        refuse('stream');
        return (this.streams ??= new WorkflowStreams(this.host, !this.replayOnly)).stream(name);
      },
      patched: (changeId) => {
        refuse('patched');
        return this.patched(changeId, false);
      },
      deprecatePatch: (changeId) => {
        refuse('deprecatePatch');
        void this.patched(changeId, true);
      },
      onUpdate: (update, handler, options) => {
        refuse('onUpdate');
        return this.updates.register(
          update as AnyUpdateDefinition | string,
          handler as (args: unknown) => unknown,
          options?.validate as UpdateValidator<unknown> | undefined,
        );
      },
      continueAsNew: (input, options) => {
        refuse('continueAsNew');
        return new ContinueAsNew(input, options?.version);
      },
      startChild: ((...args: Parameters<WorkflowContext['startChild']>) => {
        refuse('startChild');
        return children.startChild(...args);
      }) as WorkflowContext['startChild'],
      executeChild: ((...args: Parameters<WorkflowContext['executeChild']>) => {
        refuse('executeChild');
        return children.executeChild(...args);
      }) as WorkflowContext['executeChild'],
      onQuery: (query, handler) => {
        refuse('onQuery');
        return this.queries.register(query, handler);
      },
    };
  }

  private startWorkflow(): void {
    Promise.resolve()
      .then(() => this.options.workflow.run(this.ctx, this.options.input))
      .then(
        (value) => (this.settled = { ok: true, value }),
        (error) => (this.settled = { ok: false, error }),
      )
      .finally(() => this.wake.notify());
  }

  /** Takes the next sequence number and checks it against history. */
  private beginStep(identity: string): { seq: number; step: StepHistory | undefined } | undefined {
    if (this.state !== 'running' || this.fatal) return undefined;
    const seq = this.nextSeq++;
    if (this.cancelReason !== undefined) throw new CancelledError(this.options.runId, this.cancelReason);
    try {
      return { seq, step: this.history?.step(seq, identity) };
    } catch (err) {
      this.fail(err as Error);
      return undefined;
    }
  }

  /**
   * ctx.run: one step. A step that history has settled waits for its turn in the delivery order.
   * A live one starts at once when nothing is waiting to be journaled before it (the common case:
   * no tick is spent on an empty flush), else after the earlier appends are durable; pipelined,
   * an idempotent one starts at once either way. Not async: the workflow awaits the one promise
   * `live` returns, not a wrapper around it.
   */
  private callActivity<I, O>(def: ActivityDefinition<I, O>, input: I, options?: ActivityOptions): Promise<O> {
    let effective = def;
    let begun: { seq: number; step: StepHistory | undefined } | undefined;
    try {
      if (options) {
        effective = { ...def, ...options };
        checkFreshness(def.name, effective);
      }
      begun = this.beginStep(`activity:${def.name}`);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (!begun) return never();
    const { seq, step } = begun;
    const pipelined =
      this.options.pipelineSteps === true &&
      !journalsStart(effective) &&
      !effective.checkpoint &&
      this.promiseWrites === 0;
    if (step?.completion) {
      if (effective.maxAgeMs !== undefined && step.completion.type === 'ActivityCompleted') {
        const stale = effective;
        this.refreshes.register(seq, {
          maxAgeMs: effective.maxAgeMs,
          run: async () => {
            await this.flushAppends();
            const request = this.rateWaits.request(stale, input);
            if (request !== undefined) await this.rateWaits.waitForPlace(request);
            return executeActivity(this.execution(stale, input, seq, false, true, false, request));
          },
        });
      }
      return this.awaitHistory(seq) as Promise<O>;
    }
    // Past the journal's end in a replay-only execution: the step stays where the journal left it.
    if (this.replayOnly) return never();
    const inDoubt = this.history?.find(step, 'ActivityStarted') !== undefined;
    if (effective.rateLimit === undefined) {
      // The common path: no rate limit, nothing asked and no closure made.
      return this.startLive(this.execution(effective, input, seq, inDoubt, false, pipelined), pipelined);
    }
    let request: RateLimitRequest | undefined;
    try {
      request = this.rateWaits.request(effective, input);
    } catch (err) {
      this.fail(err as Error);
      return never();
    }
    const execution = this.execution(effective, input, seq, inDoubt, false, pipelined, request);
    if (request === undefined) return this.startLive(execution, pipelined);
    return this.rateWaits.gate(seq, request, () => this.startLive(execution, pipelined));
  }

  /** Starts a live execution, after the journal appends in flight unless the step is pipelined. */
  private startLive<I, O>(execution: ActivityExecution<I, O>, pipelined: boolean): Promise<O> {
    if (pipelined || this.pendingAppends === 0) return this.live(executeActivity(execution));
    return this.live(this.flushAppends().then(() => executeActivity(execution)));
  }

  /** What executeActivity needs for one live execution of step `seq`. */
  private execution<I, O>(
    def: ActivityDefinition<I, O>,
    input: I,
    seq: number,
    inDoubt: boolean,
    refreshed: boolean,
    pipelined: boolean,
    rateLimit?: RateLimitRequest,
  ): ActivityExecution<I, O> {
    return {
      beforeRetry: rateLimit === undefined ? undefined : () => this.rateWaits.waitForPlace(rateLimit),
      durableLater: pipelined && !refreshed,
      def,
      input,
      seq,
      runId: this.options.runId,
      inDoubt,
      refreshed,
      signal: this.activityAbort.signal,
      append: this.appendEntries,
      host: this.host,
      around: this.around,
      mayStart: this.mayStart,
    };
  }

  /** `append`, bound once per run (each step's execution is handed it). */
  private readonly appendEntries = (entries: NewEntry[], options?: AppendOptions): Promise<void> =>
    this.append(entries, options);

  /**
   * ctx.patched / ctx.deprecatePatch: the answer comes from the journal (PatchAnswers); a new
   * marker is appended in call order, so no step after it can be durable without it. No sequence
   * number is taken (invariant 6).
   */
  private patched(changeId: string, deprecated: boolean): boolean {
    const { answer, marker } = this.patchAnswers.decide(changeId, deprecated, this.nextSeq);
    if (marker && this.state === 'running' && !this.fatal) this.appendInBackground([marker]);
    return answer;
  }

  private async sleep(duration: Parameters<WorkflowContext['sleep']>[0]): Promise<void> {
    const ms = toMs(duration, 'ctx.sleep duration');
    const begun = this.beginStep('sleep');
    if (!begun) return never();
    const { seq, step } = begun;
    if (step?.completion) return this.awaitHistory(seq) as Promise<void>;
    let wakeAt = this.history?.find(step, 'TimerScheduled')?.wakeAt;
    if (wakeAt === undefined) {
      wakeAt = this.host.clock() + ms;
      this.appendInBackground([{ type: 'TimerScheduled', seq, wakeAt }]);
    }
    const at = wakeAt;
    return new Promise<void>((resolve, reject) =>
      this.waits.add(seq, { kind: 'timer', wakeAt: at, resolve: resolve as Settle['resolve'], reject }),
    );
  }

  private async waitForSignal(
    name: string,
    timeout: Parameters<WorkflowContext['sleep']>[0] | undefined,
    schema: StandardSchemaV1 | undefined,
  ): Promise<unknown> {
    const timeoutMs = timeout === undefined ? undefined : toMs(timeout, 'waitForSignal timeout');
    const begun = this.beginStep(`signal:${name}`);
    if (!begun) return never();
    const { seq, step } = begun;
    if (step?.completion) return this.awaitHistory(seq);
    let timeoutAt = this.history?.find(step, 'SignalWaitStarted')?.timeoutAt;
    if (timeoutAt === undefined) {
      timeoutAt = timeoutMs === undefined ? null : this.host.clock() + timeoutMs;
      this.appendInBackground([{ type: 'SignalWaitStarted', seq, name, timeoutAt }]);
    }
    const deadline = timeoutAt;
    return new Promise((resolve, reject) =>
      this.waits.add(seq, { kind: 'signal', name, timeoutAt: deadline, schema, resolve, reject }),
    );
  }

  /**
   * ctx.promise (invariant 11): the token is the journal's when the step has one, else drawn here
   * and journaled. A promise still open has its store record written: live beside its entry, and
   * again on every resume, since a crash may have come between the two (the store ignores a record
   * it has). The value is marked handled, so a rejection the workflow never awaits is no crash.
   */
  private promise<T>(options: PromiseOptions<T> = {}): DurablePromise<T> {
    const timeoutMs =
      options.timeout === undefined ? undefined : toMs(options.timeout, 'ctx.promise timeout');
    const schema = options.schema;
    const jsonSchema = schema === undefined ? undefined : promiseJsonSchema(schema, 'ctx.promise');
    const begun = this.beginStep('promise');
    if (!begun) {
      if (this.fatal) throw this.fatal;
      return { token: '', value: never() }; // frozen or stopped: the workflow never resumes
    }
    const { seq, step } = begun;
    const created = this.history?.find(step, 'PromiseCreated');
    let token = created?.token ?? '';
    let value: Promise<unknown>;
    if (step?.completion) {
      value = this.awaitHistory(seq);
    } else {
      let timeoutAt = created?.timeoutAt ?? null;
      let journaled: Promise<void> | undefined;
      if (created === undefined) {
        token = `bp_${randomBytes(24).toString('base64url')}`;
        timeoutAt = timeoutMs === undefined ? null : this.host.clock() + timeoutMs;
        journaled = this.append([{ type: 'PromiseCreated', seq, token, timeoutAt }]);
        journaled.catch(() => undefined); // a failed append stops the run (append's own handler)
      }
      const record = { token, seq, timeoutAt, ...(jsonSchema !== undefined && { schema: jsonSchema }) };
      this.writePromiseRecord(record, journaled);
      const deadline = timeoutAt;
      const waitToken = token;
      value = new Promise((resolve, reject) =>
        this.waits.add(seq, {
          kind: 'promise',
          token: waitToken,
          timeoutAt: deadline,
          schema,
          resolve,
          reject,
        }),
      );
    }
    value.catch(() => undefined);
    return { token, value: value as Promise<T> };
  }

  /**
   * Writes a promise's store record, counted as an append until durable (invariant 11). Until both
   * the record and its journal entry (`journaled`, a live promise's) are durable, no activity
   * starts pipelined: a token handed out must be the one every replay reads.
   */
  private writePromiseRecord(record: NewPromise, journaled: Promise<void> | undefined): void {
    if (this.host.createPromise === undefined || this.state !== 'running') return;
    this.promiseWrites++;
    this.pendingAppends++;
    const recorded = this.host.createPromise(record);
    const written = (journaled === undefined ? recorded : Promise.all([recorded, journaled])).then(
      () => {
        this.promiseWrites--;
        this.appendDone();
      },
      (err: unknown) => {
        this.promiseWrites--;
        this.appendFailed(err);
      },
    );
    this.promiseRecords = Promise.all([this.promiseRecords, written]);
  }

  /** The host's expirePromise, bound (pending-waits.ts, invariant 5). */
  private readonly expirePromise = (token: string) =>
    this.host.expirePromise?.(token) ?? Promise.resolve(undefined);

  /**
   * ctx.setAttributes: one step (invariant 14). Checked first against the workflow's declaration
   * and the names the run holds by now (its earlier calls, in call order, so a replay counts the
   * same); a recorded step settles in its turn, writing nothing; a live one writes the store after
   * the earlier appends are durable, then journals the change.
   */
  private setAttributes(values: unknown): Promise<void> {
    let changes: AttributeChanges;
    let begun: { seq: number; step: StepHistory | undefined } | undefined;
    try {
      changes = attributeChanges(
        'ctx.setAttributes',
        values,
        this.options.workflow.attributes,
        this.attributeNames,
      );
      begun = this.beginStep('attributes');
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (!begun) return never();
    for (const [name, attribute] of Object.entries(changes)) {
      if (attribute === null) this.attributeNames.delete(name);
      else this.attributeNames.add(name);
    }
    const { seq, step } = begun;
    if (step?.completion) return this.awaitHistory(seq) as Promise<void>;
    const host = this.host;
    if (host.setAttributes === undefined) {
      this.fail(
        new BatonError(
          'BATON_ATTRIBUTES_UNSUPPORTED',
          `run ${this.options.runId}: ctx.setAttributes (step #${seq}) needs a host that writes to a store; this one writes nothing`,
        ),
      );
      return never();
    }
    const write = async (): Promise<void> => {
      try {
        await host.setAttributes!(changes);
      } catch (err) {
        // As for a failed append: the run stops here, and its next owner takes the step live again.
        this.abort(err);
        throw err;
      }
      await this.append([{ type: 'AttributesSet', seq, attributes: changes }]);
    };
    return this.live(this.pendingAppends === 0 ? write() : this.flushAppends().then(write));
  }

  /**
   * What a live ctx.historyInfo() records (author/history-info.ts, invariant 1): the host's count,
   * or, on a host that keeps none, the entries this execution knows of.
   */
  private readonly liveHistoryInfo = (): HistoryInfo =>
    this.host.historyInfo?.() ?? {
      length: this.options.history.length + this.appendedEntries,
      bytes: 0,
      suggested: false,
    };

  private recordValue(
    name: ValueRecordedEntry['name'],
    make: () => ValueRecordedEntry['value'],
  ): ValueRecordedEntry['value'] {
    const begun = this.beginStep(`value:${name}`);
    if (!begun) {
      if (this.fatal) throw this.fatal;
      return make(); // frozen or stopped: nothing is journaled and the workflow never resumes
    }
    const recorded = this.history?.find(begun.step, 'ValueRecorded');
    if (recorded) return recorded.value;
    const value = make();
    this.appendInBackground([{ type: 'ValueRecorded', seq: begun.seq, name, value }]);
    return value;
  }

  // -------------------------------------------------------------------------------------------
  // Completions

  private awaitHistory(seq: number): Promise<unknown> {
    return new Promise((resolve, reject) => this.pending.set(seq, { resolve, reject }));
  }

  private deliverNextCompletion(): void {
    const entry = this.history!.nextCompletion()!;
    if (entry.type === 'UpdateAccepted') {
      this.updates.replayAccepted(entry);
      return;
    }
    const settle = this.pending.get(entry.seq);
    if (!settle) {
      const recorded = `${entry.type} of step #${entry.seq}`;
      this.fail(
        new NonDeterminismError(
          this.options.runId,
          entry.seq,
          recorded,
          'no matching ctx call at this point',
        ),
      );
      return;
    }
    this.pending.delete(entry.seq);
    const refresh = this.replayOnly ? undefined : this.refreshes.take(entry, this.host.clock());
    if (refresh) {
      // Re-run the stale step now; it settles with the new outcome before any later completion.
      this.inFlight++;
      this.refreshes.runAt(
        refresh,
        settle,
        () => this.state === 'running',
        () => {
          this.inFlight--;
          this.wake.notify();
        },
      );
      return;
    }
    settleFromHistory(this.options.runId, entry, settle);
  }

  /**
   * Tracks live work: its result reaches the workflow after history is fully delivered, and never
   * once the run stopped or froze. One derived promise per step, which is the one the workflow
   * awaits.
   */
  private live<T>(work: Promise<T>): Promise<T> {
    this.inFlight++;
    return work.then(
      (value) => {
        this.liveSettled();
        if (this.state === 'running' && this.replayDone) return value;
        return this.held(() => value);
      },
      (error: unknown) => {
        this.liveSettled();
        if (this.state === 'running' && this.replayDone) throw error;
        return this.held(() => {
          throw error;
        });
      },
    );
  }

  /**
   * A live step settled. The count drops after the workflow's continuation had its turn: a
   * sequential workflow has then already called its next step, the run's loop sees work in flight
   * all along, and it is not woken (and does not wait a turn of the event loop) once per step.
   * Two microtasks: the workflow's continuation is queued only when the step's promise resolves,
   * after this callback returns, so one would run before it.
   */
  private liveSettled(): void {
    queueMicrotask(this.liveDoneNext);
  }

  private readonly liveDoneNext = (): void => queueMicrotask(this.liveDone);

  private readonly liveDone = (): void => {
    this.inFlight--;
    this.notifyIfQuiet();
  };

  /**
   * A live result that may not reach the workflow yet: delivered once history has been (deferred),
   * or never when the run is no longer running.
   */
  private held<T>(settle: () => T): Promise<T> {
    if (this.state !== 'running') return never();
    return new Promise<T>((resolve, reject) => {
      this.deferred.push(() => {
        try {
          resolve(settle());
        } catch (err) {
          reject(err as Error);
        }
      });
    });
  }

  /**
   * The loop waits on in-flight steps and appends only to act once none is left (finish, hand off,
   * handle waits, see a blocked workflow); every other change notifies on its own.
   */
  private notifyIfQuiet(): void {
    // An update waiting for its turn needs no append pending, whatever is in flight (invariant 10).
    if (this.pendingAppends === 0 && (this.inFlight === 0 || this.updates.hasReady)) this.wake.notify();
  }

  private async handleWaits(): Promise<ExecutionOutcome | undefined> {
    const now = this.host.clock();
    if (this.rateWaits.askDue(now)) return undefined;
    const inbox = this.waits.needsInbox ? await this.host.readSignals() : [];
    await this.waits.checkSignals(inbox, this.signalRefused);
    await this.waits.checkPromises(now, inbox, this.expirePromise);
    const ready = this.waits.takeReady(now, inbox);
    for (const { wait, entry, settle } of ready) {
      void this.live(this.append([entry])).then(settle, (error: unknown) => wait.reject(error));
    }
    if (ready.length > 0) return undefined;

    const wakeAt = earliestOf(this.waits.earliestDeadline(), this.rateWaits.earliest());
    // A short wait is slept in process, the run's worker slot lent while a rate-limited step waits
    // (invariant 8); a longer one, or one with no slot to lend, suspends the run, below.
    if (
      wakeAt !== null &&
      wakeAt - now <= this.inProcessWaitMs &&
      (await this.rateWaits.waitInProcess(() => this.wake.nextOrAfter(wakeAt - this.host.clock())))
    ) {
      return undefined;
    }
    const result = await this.host.suspend({
      wakeAt,
      signals: this.waits.signalNames(),
      consumedSignalIds: this.waits.settledSignalIds,
    });
    if (result.ok) {
      this.state = 'stopped';
      return { kind: 'suspended' };
    }
    if (result.reason === 'cancel-requested') this.requestCancel();
    return undefined;
  }

  /** A payload a wait's schema refused: the host reports it (a warning, an event); not journaled. */
  private readonly signalRefused = (refusal: RefusedSignal): void => {
    this.host.signalRefused?.(refusal);
  };

  // -------------------------------------------------------------------------------------------
  // Journal

  private append(entries: NewEntry[], options?: AppendOptions): Promise<void> {
    // Replay-only writes nothing (invariant 13): what would be appended stays pending.
    if (this.replayOnly) return never();
    if (this.state === 'stopped') return Promise.reject(this.stopCause ?? new Error('execution stopped'));
    this.pendingAppends++;
    this.appendedEntries += entries.length;
    const appended = this.host.append(entries, options);
    // One derived promise does the bookkeeping and is the tail flushAppends waits for (it never
    // rejects): the append's failure stops the run, as any failed append does, except a result
    // that cannot be encoded when its step journals the failure instead.
    this.appendTail = appended.then(
      this.appendDone,
      options?.unencodableFailsStep === true ? this.resultAppendFailed : this.appendFailed,
    );
    return appended;
  }

  private readonly appendDone = (): void => {
    this.pendingAppends--;
    this.notifyIfQuiet();
  };

  private readonly appendFailed = (err: unknown): void => {
    this.abort(err);
    this.pendingAppends--;
    this.wake.notify();
  };

  /** A step's result append failed: a value with no JSON form fails only the step (its caller journals that). */
  private readonly resultAppendFailed = (err: unknown): void => {
    if (err instanceof UnencodableValueError) this.appendDone();
    else this.appendFailed(err);
  };

  private appendTail: Promise<void> = Promise.resolve();

  private appendInBackground(entries: NewEntry[]): void {
    this.append(entries).catch(() => undefined);
  }

  /**
   * Waits until every append issued so far is durable (a live step must not run ahead of them),
   * and every promise record too (invariant 11).
   */
  private flushAppends(): Promise<void> {
    if (this.promiseWrites === 0) return this.appendTail;
    return Promise.all([this.appendTail, this.promiseRecords]).then(() => undefined);
  }

  private fail(error: Error): void {
    this.fatal ??= error;
    this.wake.notify();
  }

  private finishWith(outcome: ExecutionOutcome): ExecutionOutcome {
    this.state = 'stopped';
    // Activities the workflow left running (started, never awaited) stop; with none, there is
    // nothing to tell, and a run saves an Error and an abort event.
    if (this.inFlight > 0) this.activityAbort.abort(new Error('run finished'));
    return outcome;
  }
}

/** The earlier of two optional times. */
function earliestOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
