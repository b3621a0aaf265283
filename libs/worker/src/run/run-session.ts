/**
 * One claimed run on one worker, from lease to finish:
 * recovery (recovery.ts: fence marker -> latest checkpoint + journal tail -> verified history)
 * -> replay/execute -> finish, suspend or hand off.
 *
 * Invariants:
 * 1. The LeaseAcquired marker is appended before anything is read, so every entry of an older
 *    owner that lands after it is recognisably stale (recovery.ts). The first owner (epoch 1, no
 *    checkpoint) writes none on a bus with optimistic append: there is no older owner to fence off.
 * 2. The session writes nothing after its lease is lost; every store write carries its epoch.
 * 3. A hand-off releases the lease before it enqueues the resume message, so whoever receives the
 *    message can acquire at once.
 */
import { FencedWriteError } from '@baton/core/adapter';
import {
  PayloadTooLargeError,
  UnencodableValueError,
  type SerializedError,
  type AnyWorkflowDefinition,
} from '@baton/core';
import type { RunOutcome, RunRecord, RunStreamLog, SlotRequest } from '@baton/core/adapter';
import {
  findUnencodable,
  isSealedValue,
  openValue,
  protectionActive,
  ReplayExecutor,
  sealOutcome,
  sealUpdateOutcome,
  serializeError,
  type ExecutionHost,
  type ExecutionOutcome,
  type PromiseDelivery,
  type JournalEntry,
  type NewEntry,
  encodeEntries,
  HistoryLimitError,
  type HistoryInfo,
  type HistoryLimits,
  type StreamWrite,
  LeaseLostError,
  isContinuedAsNew,
  CheckpointIntegrityError,
} from '@baton/core/runtime';
import { ATTR, withActivitySpan, type WorkerInstruments } from '@baton/telemetry';
import type { Attributes, Context } from '@opentelemetry/api';
import { JournalWriter } from './journal-writer.js';
import { RunStreams } from './run-streams.js';
import { HistoryBounds, type HistoryWarnings } from './history-bounds.js';
import { cancelOpenChildren, reportEndToParent, startChild, startSuccessor } from './run-links.js';
import { carryToSuccessor } from './carry-over.js';
import { afterParking, releaseSlot, slotFor, takeSlot } from './concurrency-gate.js';
import { enqueueResume, enqueueWake } from './run-messages.js';
import type { LeaseHandlers, LeaseKeeper } from '../lease-keeper.js';
import type { ResolvedWorkerOptions } from '../options.js';
import { recoverRun } from './recovery.js';
import { handleUnreadableRun } from './unreadable-run.js';
import { countsAsResumeFailure } from './claim-failures.js';
import type { SessionEnd } from '../events.js';

/**
 * What a session uses of its worker: the options it reads and the worker's parts it calls. Built
 * once in worker.ts; claim.ts binds `logger` and `onEvent` to each run before handing them on.
 */
export interface SessionDeps extends Pick<
  ResolvedWorkerOptions,
  | 'transport'
  | 'store'
  | 'logger'
  | 'onEvent'
  | 'faults'
  | 'payloadProtection'
  | 'claimCheck'
  | 'workerId'
  | 'checkpointEvery'
  | 'historyLimits'
  | 'inProcessWaitMs'
  | 'pipelineSteps'
  | 'unreadableRetryMs'
> {
  readonly keeper: Pick<LeaseKeeper, 'add' | 'remove' | 'confirm'>;
  readonly instruments: WorkerInstruments;
  /**
   * The store's time as this worker estimates it (store-clock.ts): timer deadlines and journal
   * times are on the store's clock, which compares them.
   */
  readonly storeNow: () => number;
  /** Lends the run's claim slot while it waits for a rate limit (claim-loop.ts). */
  readonly lendSlot?: () => (() => Promise<void>) | undefined;
  /** The runs this worker warned about for their history's size (history-bounds.ts): once each. */
  readonly historyWarnings?: HistoryWarnings;
}

export interface SessionStart {
  run: RunRecord;
  workflow: AnyWorkflowDefinition;
  epoch: number;
  acquiredAt: number;
  /** The run was created by the message this session claimed, at epoch 1: no checkpoint exists. */
  fresh?: boolean;
  cancelRequested: boolean;
  /** Claimed by a wake for an update request: the run reads its requests even without handlers. */
  updateRequested?: boolean;
  /** The context of this attempt's `baton.run` span: activity spans are its children. */
  traceContext: Context;
}

/** The activity duration's attributes for one workflow's attempts of one activity, by outcome. */
interface ActivityAttributes {
  ok: Attributes;
  error: Attributes;
}

/**
 * Attribute objects by workflow and activity name, shared by every attempt (they are read, never
 * changed). Both names come from the workflows' code, so the map stays as small as the set of
 * (workflow, activity) pairs; past a bound (names made up at run time) attempts get objects of
 * their own instead.
 */
const attributesByActivity = new Map<string, Map<string, ActivityAttributes>>();
const MAX_SHARED_ACTIVITY_ATTRIBUTES = 1000;
let sharedActivityAttributes = 0;

function activityAttributes(workflow: string, name: string): ActivityAttributes {
  let byName = attributesByActivity.get(workflow);
  let found = byName?.get(name);
  if (found === undefined) {
    const labels = { [ATTR.workflow]: workflow, [ATTR.activity]: name };
    found = {
      ok: Object.freeze({ ...labels, [ATTR.outcome]: 'ok' }),
      error: Object.freeze({ ...labels, [ATTR.outcome]: 'error' }),
    };
    if (sharedActivityAttributes < MAX_SHARED_ACTIVITY_ATTRIBUTES) {
      if (byName === undefined) attributesByActivity.set(workflow, (byName = new Map()));
      byName.set(name, found);
      sharedActivityAttributes++;
    }
  }
  return found;
}

const TERMINAL = new Set<JournalEntry['type']>(['RunCompleted', 'RunFailed', 'RunCancelled']);

/** How a cancellation is recorded in the run index (and raised by `result()`). */
function cancelledError(reason: string): SerializedError {
  return { name: 'CancelledError', message: reason };
}

/** The journal entry that records an outcome. */
function terminalEntry(outcome: RunOutcome): NewEntry {
  switch (outcome.status) {
    case 'completed':
      return { type: 'RunCompleted', result: outcome.result };
    case 'failed':
      return { type: 'RunFailed', error: outcome.error };
    case 'cancelled':
      return { type: 'RunCancelled', reason: outcome.error.message };
  }
}

/** The outcome a terminal journal entry records. */
function outcomeOf(entry: JournalEntry): RunOutcome {
  if (entry.type === 'RunCompleted') return { status: 'completed', result: entry.result };
  if (entry.type === 'RunFailed') return { status: 'failed', error: entry.error };
  if (entry.type === 'RunCancelled') return { status: 'cancelled', error: cancelledError(entry.reason) };
  throw new Error(`${entry.type} is not a terminal journal entry`);
}

export class RunSession {
  private executor: ReplayExecutor | undefined;
  private writer: JournalWriter | undefined;
  private handoffRequested = false;
  /** A pause was requested (the lease keeper's renewal said so): stop at the next step and pause. */
  private pauseRequested = false;
  /** The store paused the run at its suspension point (a pause request met the leases.suspend). */
  private pausedAtSuspend = false;
  /** The run's concurrency slot, once it asked for one (concurrency-gate.ts). */
  private slot: SlotRequest | undefined;
  /** The run's input, opened from the run record once its history has verified. */
  private input: unknown;
  private abortCause: unknown;
  /** Why the run failed, when it ended `failed`. */
  failure: string | undefined;
  readonly runId: string;
  readonly epoch: number;

  private readonly keeper: SessionDeps['keeper'];
  private readonly instruments: WorkerInstruments;
  /** The store's time as this worker estimates it. */
  private readonly storeNow: () => number;
  /** The history's size against the worker's limits (history-bounds.ts), once recovered. */
  private bounds: HistoryBounds | undefined;
  /** The run's streams (run-streams.ts), made on the first write. */
  private streams: RunStreams | undefined;

  constructor(
    private readonly start: SessionStart,
    private readonly deps: SessionDeps,
  ) {
    this.runId = start.run.runId;
    this.epoch = start.epoch;
    this.keeper = deps.keeper;
    this.instruments = deps.instruments;
    this.storeNow = deps.storeNow;
  }

  /** Asks the run to stop at its next step and hand itself to another worker. */
  handoff(): void {
    this.handoffRequested = true;
    this.executor?.handoff();
  }

  /**
   * Asks the run to pause: it freezes as for a hand-off (no new step starts; in-flight activities
   * finish and their results are journaled), then pauses its lease under its epoch
   * ({@link RunControlStore.pauseHeld}) instead of releasing it. Safe to call repeatedly.
   */
  pause(): void {
    if (this.pauseRequested) return;
    this.pauseRequested = true;
    this.deps.logger.info(
      { runId: this.runId, epoch: this.epoch },
      'pause requested; stopping at the next step',
    );
    this.executor?.handoff();
  }

  /**
   * Whether the run's workflow registered an update handler: the worker's update poll
   * (update-poll.ts) asks the store about such runs only.
   */
  get acceptsUpdates(): boolean {
    return this.executor?.acceptsUpdates === true;
  }

  /** The store holds update requests for the run (update-poll.ts): the executor reads them. */
  updatesArrived(): void {
    this.executor?.updatesArrived();
  }

  /**
   * Answers the query `name` from the run's state in memory (docs/queries.md): the handler runs
   * between two turns of the workflow under the executor's read-only guard, so the run goes on as
   * if it had not been asked. Undefined while the session is still recovering (no executor yet).
   */
  answerQuery(name: string, args: unknown): ReturnType<ReplayExecutor['answerQuery']> | undefined {
    return this.executor?.answerQuery(name, args);
  }

  /** Stops at once; nothing more is written except a best-effort hand-off when `cause` allows it. */
  abort(cause: unknown): void {
    this.abortCause ??= cause;
    if (cause instanceof LeaseLostError || cause instanceof FencedWriteError) {
      this.writer?.stop(cause);
      this.streams?.stop(cause);
    }
    this.executor?.abort(cause);
  }

  /**
   * Cancels the run at its next step with `reason`; without one (the renewal saw the store's cancel
   * flag) the reason the store kept with the flag is read first, so the run ends with the words
   * `client.cancel(id, reason)` was given.
   */
  cancel(reason?: string): void {
    if (reason !== undefined) {
      this.executor?.requestCancel(reason);
      return;
    }
    void this.storedCancelReason().then((stored) => this.executor?.requestCancel(stored));
  }

  /** The reason kept with the run's cancel flag; undefined when none was given or it cannot be read. */
  private async storedCancelReason(): Promise<string | undefined> {
    try {
      return (await this.deps.store.leases.get(this.runId))?.cancelReason;
    } catch (err) {
      // The cancel still happens; only its words are lost (the executor's default reason).
      this.deps.logger.warn({ err, runId: this.runId }, 'the cancel reason could not be read');
      return undefined;
    }
  }

  async run(): Promise<SessionEnd> {
    const { runId, epoch } = this;
    this.keeper.add(runId, epoch, this.start.acquiredAt, {
      ...this.leaseHandlers,
      logger: this.deps.logger,
    });
    try {
      return await this.execute();
    } finally {
      this.keeper.remove(runId);
    }
  }

  /** What the lease keeper calls for this run, whenever it (re)starts renewing it. */
  private readonly leaseHandlers: LeaseHandlers = {
    onLost: (error) => {
      this.instruments.leaseLosses.add(1);
      this.deps.onEvent({ type: 'lease-lost', runId: this.runId, epoch: this.epoch });
      this.abort(error);
    },
    onCancelRequested: () => this.cancel(),
    onPauseRequested: () => this.pause(),
  };

  private async execute(): Promise<SessionEnd> {
    const { runId, epoch } = this;
    // Resume point, fence marker, journal tail and verified history (recovery.ts).
    const recovered = await recoverRun(
      this.deps,
      { run: this.start.run, epoch, fresh: this.start.fresh === true },
      this.storeNow,
      this.instruments,
    );
    if ('unreadable' in recovered) return this.unreadable(recovered.unreadable);
    const { history, markerPosition, leadEntry } = recovered;
    this.input = recovered.input;
    const { checkpoint, entries: effective, resolved, head } = history;
    this.writer = this.newWriter(effective, history.lastSeq, markerPosition, head, leadEntry);
    // Anchor the run's journal on a bus where a read from the start would scan other runs' records.
    if (this.deps.transport.journal.scansSharedLog && !checkpoint) await this.writer.checkpoint('running');

    const terminal = resolved.find((e) => TERMINAL.has(e.type));
    // The last owner journaled the outcome but died before recording it in the store.
    if (terminal) return this.finish(outcomeOf(terminal), true);
    if (this.abortCause !== undefined)
      return this.afterStop({ kind: 'stopped', reason: 'aborted', cause: this.abortCause });

    const gate = await this.concurrencyGate();
    if (typeof gate === 'string') return gate;
    const cancelRequested = this.start.cancelRequested || gate !== undefined;
    const cancelReason = cancelRequested ? await this.storedCancelReason() : undefined;
    this.executor = new ReplayExecutor({
      workflow: this.start.workflow,
      input: this.input,
      runId,
      history: resolved,
      host: this.host(),
      inProcessWaitMs: this.deps.inProcessWaitMs,
      cancelRequested,
      cancelReason,
      pipelineSteps: this.deps.pipelineSteps,
      updateRequested: this.start.updateRequested === true,
    });
    if (this.handoffRequested || this.pauseRequested) this.executor.handoff();
    let outcome: ExecutionOutcome;
    try {
      outcome = await this.executor.run();
    } catch (err) {
      // A sealed signal payload read from the inbox that does not verify fails the run; one whose
      // key this worker lacks leaves it intact: as the same failures of its history do.
      if (err instanceof CheckpointIntegrityError) return this.unreadable(err);
      throw err;
    }
    return this.afterStop(outcome);
  }

  /** The journal writer of this session, after `entries` (the replayed history). */
  private newWriter(
    entries: JournalEntry[],
    checkpointSeq: number,
    position: number,
    head: string | undefined,
    leadEntry: JournalEntry | undefined,
  ): JournalWriter {
    const { transport, store, payloadProtection } = this.deps;
    // The bytes of the history recovered, encoded once here (none for a fresh run); every record
    // after it is counted as it lands.
    this.bounds = new HistoryBounds(
      this.runId,
      this.deps.historyLimits,
      entries.length,
      entries.length === 0 ? 0 : encodeEntries(entries).byteLength,
      this.historySoftLimit,
    );
    return new JournalWriter({
      transport,
      store,
      runId: this.runId,
      epoch: this.epoch,
      entries,
      position,
      checkpointSeq,
      checkpointEvery: this.deps.checkpointEvery,
      faults: this.deps.faults,
      instruments: this.instruments,
      protection: protectionActive(payloadProtection) ? payloadProtection : undefined,
      head,
      claimCheck: this.deps.claimCheck,
      onUnencodableStep: this.reportUnencodableStep,
      clock: this.storeNow,
      leadEntry,
      bounds: this.bounds,
    });
  }

  /** The history reached its soft limit: warn, once per run on this worker. */
  private readonly historySoftLimit = (info: HistoryInfo, limits: HistoryLimits): void => {
    if (this.deps.historyWarnings?.first(this.runId) === false) return;
    const { name, version } = this.start.workflow;
    this.deps.logger.warn(
      { runId: this.runId, workflow: `${name}@${version}`, entries: info.length, bytes: info.bytes, limits },
      `run ${this.runId} (${name}@${version}): its history reached ${info.length} entries, ${info.bytes} bytes, ` +
        `past the soft limit (${limits.softEntries} entries or ${limits.softBytes} bytes; BATON_HISTORY_SOFT_*); ` +
        `at ${limits.maxEntries} entries or ${limits.maxBytes} bytes it fails. End the run with ` +
        '`return ctx.continueAsNew(next)` when ctx.historyInfo().suggested is true (docs/continue-as-new.md)',
    );
  };

  /**
   * Takes the run's concurrency slot (concurrency-gate.ts), or parks the run in its key's line and
   * ends the session `suspended`. `{ cancel }` when a pending cancel stopped the parking: the run
   * goes on without a slot only to end cancelled at its first step. A key function that throws
   * or returns no usable key fails the run.
   */
  private async concurrencyGate(): Promise<SessionEnd | { cancel: true } | undefined> {
    let slot: SlotRequest | undefined;
    try {
      slot = slotFor(this.start.workflow, this.runId, this.input);
    } catch (err) {
      return this.finish({ status: 'failed', error: serializeError(err) });
    }
    if (slot === undefined) return undefined;
    this.slot = slot;
    if (await takeSlot(this.deps, slot)) return undefined;
    this.keeper.remove(this.runId);
    const parked = await this.deps.store.leases.suspend({
      runId: this.runId,
      epoch: this.epoch,
      wakeAt: null,
      signals: [],
      consumedSignalIds: [],
    });
    if (!parked.ok) {
      this.keeper.add(this.runId, this.epoch, Date.now(), this.leaseHandlers);
      return { cancel: true };
    }
    if (parked.paused === true) {
      await releaseSlot(this.deps, slot);
      return this.reportPaused();
    }
    await afterParking(this.deps, slot);
    return 'suspended';
  }

  private host(): ExecutionHost {
    const writer = this.writer!;
    const { runStreams } = this.deps.transport;
    const { store } = this.deps;
    return {
      runId: this.runId,
      append: (entries, options) => writer.append(entries, options),
      // The store's clock, not this machine's: wakeAt and timeoutAt are compared by the store, and
      // ctx.now() records this too, so a workflow's times agree with its timers on every worker.
      clock: this.storeNow,
      historyInfo: () => this.bounds!.info(writer.entries.length),
      // Payloads sealed in the inbox (docs/integrity.md) are opened here, before any wait sees them.
      readSignals: async () => {
        const inbox = await store.signals.read(this.runId);
        const protection = this.deps.payloadProtection;
        return inbox.map((signal) =>
          isSealedValue(signal.payload)
            ? { ...signal, payload: openValue(signal.payload, this.runId, 'signal payload', protection) }
            : signal,
        );
      },
      // Update arguments sealed by the client (docs/integrity.md) are opened here, before any check.
      readUpdates: async () => {
        const requests = await store.updates.pending(this.runId);
        const protection = this.deps.payloadProtection;
        // openValue hands a value that is not sealed back as it is.
        return requests.map((request) => ({
          ...request,
          args: openValue(request.args, this.runId, 'update args', protection),
        }));
      },
      // Fenced by this session's epoch (a zombie's answer is never kept), sealed as the run's result is.
      settleUpdate: async ({ updateId, name, outcome }) => {
        await store.updates.settle(this.runId, this.epoch, {
          updateId,
          name,
          outcome: sealUpdateOutcome(outcome, this.runId, this.deps.payloadProtection),
        });
      },
      // Rate limits are kept on the store's clock: a refusal's wait is a duration, not a time, so
      // this worker's clock skew never moves it.
      takeRateToken: (request) => store.rateLimits.take(request),
      // Durable promises (core's author/promise.ts): the record its token is completed against,
      // and at its deadline the record closed, or the completion that came first, opened as the
      // inbox's payloads are.
      createPromise: (promise) => store.promises.create({ ...promise, runId: this.runId }),
      expirePromise: async (token) => {
        const record = await store.promises.expire(token);
        if (record?.state !== 'resolved' && record?.state !== 'rejected') return undefined;
        const opened = openValue(record.payload, this.runId, 'signal payload', this.deps.payloadProtection);
        return opened as PromiseDelivery;
      },
      lendSlot: this.deps.lendSlot,
      startChild: (child) => startChild(this.deps, this.start.run, child),
      // Search attributes (ctx.setAttributes): the store's write is fenced by this run's epoch.
      setAttributes: (changes) => store.attributes.set(this.runId, this.epoch, changes),
      // A process frozen past its lease (SIGSTOP, a long pause) wakes with its timers due at
      // once: the step a newer owner may have completed meanwhile must not start here before the
      // keeper's next tick reports the loss.
      assertMayStartActivity: () => {
        const lost = this.keeper.confirm(this.runId, this.epoch);
        if (lost === undefined) return;
        this.abort(lost);
        throw lost;
      },
      heartbeat: (seq, details) =>
        this.deps.onEvent({ type: 'activity-heartbeat', runId: this.runId, seq, details }),
      // Absent on a transport without run streams: ctx.stream then throws where it is called.
      ...(runStreams !== undefined && {
        streamWrite: (stream: string, write: StreamWrite, bytes: number) =>
          this.runStreams(runStreams).write(stream, write, bytes),
      }),
      signalRefused: ({ name, signalId, seq, issues }) => {
        this.deps.logger.warn(
          { runId: this.runId, signal: name, signalId, seq, issues },
          `signal '${name}' to run ${this.runId} does not match the schema of its wait (step #${seq}): ` +
            `${issues.join('; ')}. It was skipped and the wait goes on; send a valid payload`,
        );
        this.deps.onEvent({ type: 'signal-refused', runId: this.runId, signal: name, signalId, issues });
      },
      // Timed around the attempt's own promise (no wrapper function or promise per step), with
      // the attribute objects of an activity made once per worker, not once per attempt.
      aroundActivityAttempt: (info, attempt) => {
        const started = performance.now();
        const attributes = activityAttributes(this.start.run.workflow, info.name);
        const { activityDuration } = this.instruments;
        return withActivitySpan(this.start.traceContext, info, attempt).then(
          (result) => {
            activityDuration.record((performance.now() - started) / 1000, attributes.ok);
            return result;
          },
          (err: unknown) => {
            activityDuration.record((performance.now() - started) / 1000, attributes.error);
            throw err;
          },
        );
      },
      suspend: async (request) => {
        await this.streams?.flush();
        await writer.checkpoint('suspended');
        this.keeper.remove(this.runId);
        const result = await store.leases.suspend({ runId: this.runId, epoch: this.epoch, ...request });
        if (!result.ok) this.keeper.add(this.runId, this.epoch, Date.now(), this.leaseHandlers);
        else await releaseSlot(this.deps, this.slot);
        if (result.ok && result.paused === true) this.pausedAtSuspend = true;
        if (result.ok && result.paused !== true) await this.wakeForLateUpdates();
        // The executor cancels on this answer; hand it the reason first (the first reason wins).
        if (!result.ok && result.reason === 'cancel-requested') {
          const reason = await this.storedCancelReason();
          if (reason !== undefined) this.executor?.requestCancel(reason);
        }
        return result;
      },
    };
  }

  /** The run's streams, made on the first write (docs/streams.md). */
  private runStreams(log: RunStreamLog): RunStreams {
    this.streams ??= new RunStreams({
      log,
      runId: this.runId,
      epoch: this.epoch,
      codec: this.deps.payloadProtection.codec,
      sinceMs: this.start.run.createdAt,
      // A stream write the bus failed stops the run as a failed journal append does: it resumes
      // elsewhere, and its replay writes the workflow's chunks again.
      onFailure: (err) => {
        this.deps.logger.warn({ err, runId: this.runId }, 'a run stream write failed; stopping the run');
        this.abort(err);
      },
    });
    return this.streams;
  }

  /**
   * After the run suspended: an update request that arrived while it was held, and that it had
   * not read, found the run held and woke nothing (contracts/updates.ts, invariant 3). Wake it for
   * that request now. Only for a workflow with update handlers (one without is woken only by a
   * request that finds it suspended). A failure is logged: the caller's repeat wakes the run.
   */
  private async wakeForLateUpdates(): Promise<void> {
    if (this.executor?.acceptsUpdates !== true) return;
    try {
      const waiting = await this.deps.store.updates.waiting([this.runId]);
      if (waiting.length > 0) await enqueueWake(this.deps.transport.runQueue, this.runId, 'update');
    } catch (err) {
      this.deps.logger.warn(
        { err, runId: this.runId },
        'checking for update requests after suspending failed; a repeated request wakes the run',
      );
    }
  }

  private async afterStop(outcome: ExecutionOutcome): Promise<SessionEnd> {
    const writer = this.writer!;
    switch (outcome.kind) {
      case 'completed':
        return this.finish({ status: 'completed', result: outcome.result });
      case 'failed':
        return this.finish({ status: 'failed', error: outcome.error });
      case 'cancelled':
        return this.finish({ status: 'cancelled', error: cancelledError(outcome.reason) });
      case 'suspended':
        return this.pausedAtSuspend ? this.reportPaused() : 'suspended';
      case 'stopped':
        if (outcome.reason === 'handoff' && this.pauseRequested) return this.pauseHere();
        if (outcome.reason === 'handoff') {
          await writer.flush();
          await this.streams?.flush();
          await this.handOff();
          return 'handed-off';
        }
        if (outcome.cause instanceof PayloadTooLargeError || outcome.cause instanceof UnencodableValueError)
          return this.failUnjournalable(outcome.cause);
        if (outcome.cause instanceof HistoryLimitError) return this.failHistoryLimit(outcome.cause);
        await this.afterAbort(outcome.cause);
        return 'aborted';
    }
  }

  /**
   * Records the outcome: journaled first (unless the journal already has it), then in the store,
   * atomically with the final checkpoint and the lease's end.
   */
  private async finish(ending: RunOutcome, journaled = false): Promise<SessionEnd> {
    const writer = this.writer!;
    const outcome = journaled ? ending : await this.unlessCancelled(ending);
    if (outcome.status === 'failed') this.failure = `${outcome.error.name}: ${outcome.error.message}`;
    if (!journaled) {
      // Everything the run wrote to its streams is there before its end is.
      await this.streams?.flush();
      try {
        await writer.append([terminalEntry(outcome)]);
      } catch (err) {
        // The workflow's result has no JSON form or is too large, or (pipelined) an earlier step's
        // was: the run cannot complete, and finishing it again would fail the same way forever.
        if (outcome.status === 'failed') throw err;
        if (err instanceof PayloadTooLargeError) return this.failUnjournalable(err);
        if (!(err instanceof UnencodableValueError)) throw err;
        return this.failUnjournalable(this.namingWorkflowResult(err, outcome));
      }
    }
    // Sent after the end is journaled and before it is recorded, so a crash in between sends the
    // same messages again (core's continue-as-new.ts invariant 2, child-workflows.ts 3 and 5): the
    // successor's start, the end to a parent, cancels to the children left running. What the run
    // never took goes to its successor first (carry-over.ts), before the successor can start.
    const run = this.start.run;
    if (outcome.status === 'completed' && isContinuedAsNew(outcome.result)) {
      await carryToSuccessor(this.deps, run, this.epoch, writer.entries, outcome.result);
      await startSuccessor(this.deps, run, outcome.result);
    }
    await reportEndToParent(this.deps, run, outcome);
    await cancelOpenChildren(this.deps, this.runId, writer.entries, outcome);
    await this.deps.faults?.('before-finish', { runId: this.runId, epoch: this.epoch });
    const started = performance.now();
    await this.deps.store.runs.finish(
      this.runId,
      this.epoch,
      sealOutcome(outcome, this.runId, this.deps.payloadProtection),
      writer.snapshot(outcome.status),
    );
    // The final checkpoint is written by runs.finish, atomically with the outcome.
    this.instruments.checkpointWriteDuration.record((performance.now() - started) / 1000);
    await releaseSlot(this.deps, this.slot);
    return outcome.status;
  }

  /**
   * A cancel accepted before the run journals its end wins over that end (docs/operations.md, "When
   * a cancel is accepted"): the owner closes the run's cancels in the store (one fenced call) just
   * before it journals a completed or failed end, and ends the run cancelled instead when a cancel
   * was requested before that. A run whose workflow already saw the cancel keeps the end its code
   * chose (it may catch CancelledError, clean up and return).
   */
  private async unlessCancelled(outcome: RunOutcome): Promise<RunOutcome> {
    if (outcome.status === 'cancelled' || this.executor?.cancelling === true) return outcome;
    const answer = await this.deps.store.control.closeCancels(this.runId, this.epoch);
    if (!answer.cancelRequested) return outcome;
    return { status: 'cancelled', error: cancelledError(answer.cancelReason ?? 'cancel requested') };
  }

  /**
   * An entry the bus will never accept (an activity result above its size limit) or a value with
   * no JSON form that no step took as its failure (a workflow's result, a pipelined step's result):
   * resuming would run the activity again and fail the same way forever. Fail the run with the
   * reason instead, and leave a dead letter so an operator sees it next to the other poison
   * messages.
   */
  private async failUnjournalable(cause: PayloadTooLargeError | UnencodableValueError): Promise<SessionEnd> {
    const reason = `run ${this.runId}: ${cause.message}`;
    const tooLarge = cause instanceof PayloadTooLargeError;
    const code = tooLarge ? 'too-large' : 'unencodable';
    const details = tooLarge ? { size: cause.size } : { problem: cause.problem };
    this.deps.logger.warn(
      { runId: this.runId, epoch: this.epoch, code: cause.code, what: cause.what, ...details },
      tooLarge
        ? 'run failed: an entry is larger than the bus accepts'
        : 'run failed: a value it must journal cannot be encoded',
    );
    await this.deps.transport.deadLetters
      .add({
        data: new TextEncoder().encode(JSON.stringify({ runId: this.runId, what: cause.what, ...details })),
        headers: { 'baton-run-id': this.runId },
        code,
        reason,
        at: Date.now(),
      })
      .catch((err: unknown) => this.deps.logger.warn({ err, runId: this.runId }, 'dead-lettering failed'));
    this.instruments.deadLetters.add(1, { [ATTR.code]: code });
    this.deps.onEvent({ type: 'dead-lettered', code, reason, runId: this.runId });
    return this.finish({ status: 'failed', error: serializeError(cause) });
  }

  /**
   * The history reached its hard limit (history-bounds.ts): a resume would replay it and stop at
   * the same step, so the run fails, with the error that says to continue as new. Its RunFailed
   * is the one entry the writer still takes.
   */
  private async failHistoryLimit(cause: HistoryLimitError): Promise<SessionEnd> {
    this.deps.logger.error(
      { runId: this.runId, epoch: this.epoch, code: cause.code, entries: cause.length, bytes: cause.bytes },
      cause.message,
    );
    return this.finish({ status: 'failed', error: serializeError(cause) });
  }

  /** Names the workflow when it is its own result that has no JSON form. */
  private namingWorkflowResult(err: UnencodableValueError, outcome: RunOutcome): UnencodableValueError {
    const problem = outcome.status === 'completed' ? findUnencodable(outcome.result) : undefined;
    if (problem === undefined) return err;
    const { name, version } = this.start.workflow;
    return new UnencodableValueError(`result of workflow ${name}@${version}`, problem, { cause: err });
  }

  /** A step's result had no JSON form; the step journals ActivityFailed (never run again). */
  private readonly reportUnencodableStep = (err: UnencodableValueError): void => {
    this.deps.logger.warn(
      { runId: this.runId, epoch: this.epoch, code: err.code, what: err.what, problem: err.problem },
      'activity result cannot be encoded: the step fails and the activity does not run again',
    );
  };

  /** The run's checkpoint or journal could not be read: fail it, or leave it for an operator. */
  private async unreadable(err: unknown): Promise<SessionEnd> {
    const end = await handleUnreadableRun(err, {
      runId: this.runId,
      epoch: this.epoch,
      options: this.deps,
      instruments: this.instruments,
      releaseLease: () => this.keeper.remove(this.runId),
      storeNow: this.storeNow,
    });
    if (end === 'failed') this.failure = `${(err as Error).name}: ${(err as Error).message}`;
    return end;
  }

  /** Logs the pause and says how the session ended. */
  private reportPaused(): SessionEnd {
    this.deps.logger.info({ runId: this.runId, epoch: this.epoch }, 'run paused');
    return 'paused';
  }

  /**
   * The run froze for a pause: every in-flight result is journaled; checkpoint, stop renewing, and
   * pause the lease under this epoch. A cancel that arrived meanwhile wins, and a request withdrawn
   * meanwhile (`client.runs.resume`) stands: the run is handed off (its next owner ends it cancelled, or
   * runs on). A fenced pause means the lease moved on: nothing to do.
   */
  private async pauseHere(): Promise<SessionEnd> {
    const writer = this.writer!;
    await writer.flush();
    await this.streams?.flush();
    await writer.checkpoint('running').catch(() => undefined);
    this.keeper.remove(this.runId);
    let result;
    try {
      result = await this.deps.store.control.pauseHeld(this.runId, this.epoch);
    } catch (err) {
      if (!(err instanceof FencedWriteError)) throw err;
      this.deps.logger.warn({ runId: this.runId, epoch: this.epoch }, 'pause refused: the lease moved on');
      return 'aborted';
    }
    if (result.ok) {
      await releaseSlot(this.deps, this.slot);
      return this.reportPaused();
    }
    const released = await this.deps.store.leases.release(this.runId, this.epoch);
    if (released) await enqueueResume(this.deps.transport.runQueue, this.runId, 'handoff');
    return 'handed-off';
  }

  private async handOff(): Promise<void> {
    const { store, transport } = this.deps;
    await this.writer!.checkpoint('running').catch(() => undefined);
    // Renewals stop before the release: one that landed after it would find the lease ownerless
    // and report a loss that is this session's own hand-off.
    this.keeper.remove(this.runId);
    const released = await store.leases.release(this.runId, this.epoch);
    if (!released) return;
    await enqueueResume(transport.runQueue, this.runId, 'handoff');
  }

  /**
   * After an abort: a lost lease means someone else owns the run, so do nothing. Anything else (a
   * failed append, a shutdown timeout) still holds the lease: hand the run off so it resumes now
   * rather than after the lease runs out. If that fails too, the reaper recovers it.
   */
  private async afterAbort(cause: unknown): Promise<void> {
    if (cause instanceof LeaseLostError || cause instanceof FencedWriteError) return;
    // A failure of the run's own (an append the bus refuses for good, a bug) would fail the same
    // way on the next owner: thrown, it is counted on the run by the worker's claim-failure path,
    // which backs off and fails the run after too many in a row, instead of a hand-off loop.
    if (countsAsResumeFailure(cause)) throw cause;
    try {
      await this.handOff();
    } catch (err) {
      this.deps.logger.warn(
        { err, runId: this.runId },
        'hand-off after abort failed; the reaper will resume the run',
      );
    }
  }
}
